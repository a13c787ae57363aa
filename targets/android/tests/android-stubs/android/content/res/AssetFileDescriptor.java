package android.content.res;

public class AssetFileDescriptor implements java.io.Closeable {
  public java.io.FileDescriptor getFileDescriptor() {
    return null;
  }

  public long getStartOffset() {
    return 0;
  }

  public long getLength() {
    return 0;
  }

  @Override
  public void close() throws java.io.IOException {}
}
