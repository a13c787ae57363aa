// java.gradle_syntax: every Gradle build script of targets/android parses as Groovy (Debian's
// groovy compiles each to a class without running it: Gradle's DSL calls resolve only at run
// time, so this checks syntax, not the Android Gradle Plugin's DSL names).
//   groovy check_gradle_syntax.groovy FILE.gradle...
import org.codehaus.groovy.control.CompilationFailedException

int failed = 0
args.each { path ->
  try {
    new GroovyShell().parse(new File(path))
    println "ok: ${path}"
  } catch (CompilationFailedException e) {
    println "FAILED: ${path}\n${e.message}"
    failed++
  }
}
System.exit(failed == 0 ? 0 : 1)
