package android.content.res;

public final class AssetManager implements AutoCloseable {
  public final AssetFileDescriptor openFd(String fileName) throws java.io.IOException {
    return null;
  }

  @Override
  public void close() {}
}
