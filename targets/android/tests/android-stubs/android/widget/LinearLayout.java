package android.widget;

public class LinearLayout extends android.view.ViewGroup {
  public static final int HORIZONTAL = 0;
  public static final int VERTICAL = 1;

  public LinearLayout(android.content.Context context) {
    super(context);
  }

  public void setOrientation(int orientation) {}
}
