package dev.octet.example;

import android.app.Activity;
import android.content.res.AssetFileDescriptor;
import android.os.Bundle;
import android.widget.Button;
import android.widget.EditText;
import android.widget.LinearLayout;
import android.widget.ScrollView;
import android.widget.TextView;
import dev.octet.GenerateOptions;
import dev.octet.Model;
import dev.octet.OctetException;
import dev.octet.Session;
import dev.octet.SessionOptions;
import java.io.IOException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Streams text from the model in assets/model.octet into a TextView. The model is mapped from
 * the APK (stored uncompressed: see build.gradle) on a worker thread, which also runs each
 * generation; the pieces go to the UI thread as they come. Stop cancels from the UI thread.
 */
public final class MainActivity extends Activity {
  private static final int MAX_NEW_TOKENS = 200;

  private final ExecutorService worker = Executors.newSingleThreadExecutor();
  private Model model; // the worker's
  private volatile Session running;
  private TextView output;

  @Override
  protected void onCreate(Bundle savedInstanceState) {
    super.onCreate(savedInstanceState);
    final EditText prompt = new EditText(this);
    prompt.setText("It was");
    Button generate = new Button(this);
    generate.setText("Generate");
    Button stop = new Button(this);
    stop.setText("Stop");
    output = new TextView(this);
    ScrollView scroll = new ScrollView(this);
    scroll.addView(output);
    LinearLayout layout = new LinearLayout(this);
    layout.setOrientation(LinearLayout.VERTICAL);
    layout.addView(prompt);
    layout.addView(generate);
    layout.addView(stop);
    layout.addView(scroll);
    setContentView(layout);

    generate.setOnClickListener(v -> start(prompt.getText().toString()));
    stop.setOnClickListener(v -> cancel());
  }

  private void start(final String prompt) {
    cancel();
    output.setText(prompt);
    worker.execute(() -> {
      try {
        if (model == null) model = load();
        try (Session session = model.newSession(
            new SessionOptions().maxSeq(256).maxNewTokens(MAX_NEW_TOKENS).threads(0))) {
          running = session;
          session.generate(prompt,
              new GenerateOptions().maxNewTokens(MAX_NEW_TOKENS).temperature(0.8f).topP(0.95f)
                  .seed(System.nanoTime()),
              token -> {
                final String piece = token.text();
                if (!piece.isEmpty()) runOnUiThread(() -> output.append(piece));
                return true;
              });
        } finally {
          running = null;
        }
      } catch (OctetException e) {
        if (e.code() != OctetException.Code.CANCELLED) show(e.getMessage());
      } catch (IOException e) {
        show("cannot open assets/model.octet: " + e.getMessage());
      }
    });
  }

  // The model, mapped from the APK: AssetFileDescriptor gives the file, offset and length.
  private Model load() throws IOException, OctetException {
    try (AssetFileDescriptor asset = getAssets().openFd("model.octet")) {
      return Model.fromFileDescriptor(asset.getFileDescriptor(), asset.getStartOffset(),
          asset.getLength());
    }
  }

  private void cancel() {
    Session session = running;
    if (session == null) return;
    try {
      session.cancel();
    } catch (IllegalStateException closedMeanwhile) {
      // the generation ended on its own
    }
  }

  private void show(final String message) {
    runOnUiThread(() -> output.append("\n[" + message + "]"));
  }

  @Override
  protected void onDestroy() {
    cancel();
    worker.execute(() -> {
      if (model != null) model.close();
    });
    worker.shutdown();
    super.onDestroy();
  }
}
