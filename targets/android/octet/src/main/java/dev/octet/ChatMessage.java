package dev.octet;

/** One message of a chat: its role ("system", "user", "assistant", ...) and content. */
public final class ChatMessage {
  private final String role, content;

  public ChatMessage(String role, String content) {
    if (role == null) throw new NullPointerException("role");
    if (content == null) throw new NullPointerException("content");
    this.role = role;
    this.content = content;
  }

  public static ChatMessage system(String content) {
    return new ChatMessage("system", content);
  }

  public static ChatMessage user(String content) {
    return new ChatMessage("user", content);
  }

  public static ChatMessage assistant(String content) {
    return new ChatMessage("assistant", content);
  }

  public String role() {
    return role;
  }

  public String content() {
    return content;
  }
}
