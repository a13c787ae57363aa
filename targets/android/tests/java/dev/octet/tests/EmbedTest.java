package dev.octet.tests;

import dev.octet.Model;
import dev.octet.Pooling;
import dev.octet.Session;
import dev.octet.SessionOptions;
import java.io.File;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.file.Files;

/**
 * Session.embed gives the C API's embeddings float for float (octet_embed_ref, a C program on
 * octet_session_embed) and the CLI's (`octet run --pooling ... --dump`), for a BERT model.
 * Usage: EmbedTest BERT.octet OCTET_EMBED_REF OCTET_CLI WORK_DIR
 */
public final class EmbedTest {
  public static void main(String[] args) throws Exception {
    String model = args[0], ref = args[1], cli = args[2];
    File work = new File(args[3]);
    work.mkdirs();
    int[][] batch = {{2, 17, 33, 5, 9, 61}, {7, 7, 3}, {40}};
    String[] idArgs = new String[batch.length];
    for (int b = 0; b < batch.length; ++b) {
      StringBuilder sb = new StringBuilder();
      for (int id : batch[b]) sb.append(sb.length() > 0 ? "," : "").append(id);
      idArgs[b] = sb.toString();
    }
    long t0 = System.nanoTime();
    try (Model m = Model.load(model); Session s = m.newSession(new SessionOptions().maxBatch(3).maxSeq(6))) {
      int hidden = m.info().hiddenSize();
      for (Pooling pooling : Pooling.values()) {
        for (boolean normalize : new boolean[] {false, true}) {
          String name = pooling.name().toLowerCase() + (normalize ? "-normalized" : "");
          File out = new File(work, name + ".bin");
          String[] command = new String[5 + batch.length];
          command[0] = ref;
          command[1] = model;
          command[2] = pooling.name().toLowerCase();
          command[3] = normalize ? "1" : "0";
          command[4] = out.getPath();
          System.arraycopy(idArgs, 0, command, 5, batch.length);
          Check.run(command);
          float[] c = floats(Files.readAllBytes(out.toPath()), 0);
          float[][] java = s.embed(batch, pooling, normalize);
          FloatBuffer direct = ByteBuffer.allocateDirect(4 * batch.length * hidden).order(ByteOrder.nativeOrder()).asFloatBuffer();
          s.embed(batch, pooling, normalize, direct);
          for (int b = 0; b < batch.length; ++b) {
            float[] want = new float[hidden];
            System.arraycopy(c, b * hidden, want, 0, hidden);
            Check.equal(bits(java[b]), bits(want), name + ": Java == C, sequence " + b);
            float[] single = s.embed(batch[b], pooling, normalize);
            Check.equal(bits(single), bits(want), name + ": one sequence alone == C, sequence " + b);
            float[] fromBuffer = new float[hidden];
            direct.position(b * hidden);
            direct.get(fromBuffer);
            Check.equal(bits(fromBuffer), bits(want), name + ": a direct FloatBuffer == C, sequence " + b);
          }
          if (!normalize) {
            // The CLI's --dump: a float32 .npy, [batch, hidden].
            File npy = new File(work, name + ".npy");
            String[] cliCommand = new String[7 + 2 * batch.length];
            int k = 0;
            cliCommand[k++] = cli;
            cliCommand[k++] = "run";
            cliCommand[k++] = model;
            for (String ids : idArgs) {
              cliCommand[k++] = "--ids";
              cliCommand[k++] = ids;
            }
            cliCommand[k++] = "--pooling";
            cliCommand[k++] = pooling.name().toLowerCase();
            cliCommand[k++] = "--dump";
            cliCommand[k++] = npy.getPath();
            Check.run(cliCommand);
            byte[] file = Files.readAllBytes(npy.toPath());
            int headerLength = (file[8] & 0xff) | (file[9] & 0xff) << 8;
            String header = new String(file, 10, headerLength, "ISO-8859-1");
            Check.that(header.contains("'<f4'") && header.contains("(" + batch.length + ", " + hidden + ")"),
                "the CLI's .npy header: " + header);
            float[] dumped = floatsLittleEndian(file, 10 + headerLength);
            Check.equal(bits(flatten(java)), bits(dumped), name + ": Java == the CLI's --dump");
          }
          System.out.printf("%s: %d x %d floats identical%n", name, batch.length, hidden);
        }
      }
    }
    System.out.printf("EmbedTest: %d checks passed in %.1f s%n", Check.passed, (System.nanoTime() - t0) * 1e-9);
  }

  static float[] floats(byte[] bytes, int from) {
    FloatBuffer f = ByteBuffer.wrap(bytes, from, bytes.length - from).slice().order(ByteOrder.nativeOrder()).asFloatBuffer();
    float[] out = new float[f.remaining()];
    f.get(out);
    return out;
  }

  static float[] floatsLittleEndian(byte[] bytes, int from) {
    FloatBuffer f = ByteBuffer.wrap(bytes, from, bytes.length - from).slice().order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer();
    float[] out = new float[f.remaining()];
    f.get(out);
    return out;
  }

  static float[] flatten(float[][] rows) {
    float[] out = new float[rows.length * rows[0].length];
    for (int i = 0; i < rows.length; ++i) System.arraycopy(rows[i], 0, out, i * rows[0].length, rows[0].length);
    return out;
  }

  static int[] bits(float[] v) {
    int[] out = new int[v.length];
    for (int i = 0; i < v.length; ++i) out[i] = Float.floatToRawIntBits(v[i]);
    return out;
  }
}
