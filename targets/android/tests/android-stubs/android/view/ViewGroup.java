package android.view;

public abstract class ViewGroup extends View {
  public ViewGroup(android.content.Context context) {
    super(context);
  }

  public void addView(View child) {}
}
