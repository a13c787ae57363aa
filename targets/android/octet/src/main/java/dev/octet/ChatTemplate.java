package dev.octet;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The model's chat template (octet_chat_render), rendered byte for byte as Hugging Face's
 * apply_chat_template(tokenize=False) renders it. It owns nothing native (it renders through its
 * model), so it is not closeable: it throws IllegalStateException once the model is closed.
 */
public final class ChatTemplate {
  private final Model model;

  ChatTemplate(Model model) {
    this.model = model;
  }

  /** The messages rendered with the generation prompt, at the local time now. */
  public String render(List<ChatMessage> messages) throws OctetException {
    return render(messages, true);
  }

  /** The messages rendered; addGenerationPrompt: add_generation_prompt. */
  public String render(List<ChatMessage> messages, boolean addGenerationPrompt) throws OctetException {
    return render(messages, addGenerationPrompt, false, 0);
  }

  /**
   * The messages rendered with strftime_now() formatting the given time (seconds since the
   * epoch, as UTC): the same text on every device and in every time zone.
   */
  public String render(List<ChatMessage> messages, boolean addGenerationPrompt, long epochSeconds)
      throws OctetException {
    return render(messages, addGenerationPrompt, true, epochSeconds);
  }

  private String render(List<ChatMessage> messages, boolean addGenerationPrompt, boolean hasNow,
      long epochSeconds) throws OctetException {
    if (messages == null) throw new NullPointerException("messages");
    int n = messages.size();
    byte[][] roles = new byte[n][];
    byte[][] contents = new byte[n][];
    for (int i = 0; i < n; ++i) {
      ChatMessage m = messages.get(i);
      if (m == null) throw new NullPointerException("message " + i);
      roles[i] = m.role().getBytes(StandardCharsets.UTF_8);
      contents[i] = m.content().getBytes(StandardCharsets.UTF_8);
      // The C API takes NUL-terminated strings: a NUL inside would cut the text short.
      if (m.role().indexOf('\0') >= 0 || m.content().indexOf('\0') >= 0) {
        throw new OctetException(OctetException.Code.INVALID_ARGUMENT,
            "message " + i + " contains a NUL character");
      }
    }
    long h = model.handleForCall();
    try {
      byte[] text = Native.chatRender(h, roles, contents, addGenerationPrompt ? 0 : 1, hasNow, epochSeconds);
      return text == null ? "" : new String(text, StandardCharsets.UTF_8);
    } finally {
      model.endCall();
    }
  }
}
