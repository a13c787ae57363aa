package android.app;

public class Activity extends android.content.Context {
  protected void onCreate(android.os.Bundle savedInstanceState) {}

  protected void onDestroy() {}

  public void setContentView(android.view.View view) {}

  public final void runOnUiThread(Runnable action) {}

  @Override
  public android.content.res.AssetManager getAssets() {
    return null;
  }
}
