package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/provider"
	"massgen/internal/provider/providertest"
)

// upload_files on the Messages API: image and document blocks before the text of the first
// user message, the shared prefix's cache breakpoint still on that text.
func TestToWire_Attachments(t *testing.T) {
	p := newTest(t, "http://127.0.0.1:1", "k")
	req := providertest.Request()
	req.Messages[0].Stable = true
	req.Messages = append(req.Messages, provider.Message{Role: provider.RoleAssistant, Content: "Thinking."},
		provider.Message{Role: provider.RoleUser, Content: "Go on."})
	req.Attachments = []provider.Attachment{
		{Kind: provider.AttachImage, MIME: "image/png", Name: "a.png", Data: []byte("\x89PNG")},
		{Kind: provider.AttachDocument, MIME: "application/pdf", Name: "r.pdf", Data: []byte("%PDF-1")},
		{Kind: provider.AttachDocument, MIME: "text/plain", Name: "n.md", Data: []byte("# N")},
	}
	c, err := p.toWire(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c.params.Messages[0])
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := []any{
		map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": "iVBORw=="}},
		map[string]any{"type": "document", "title": "r.pdf", "source": map[string]any{"type": "base64", "media_type": "application/pdf", "data": "JVBERi0x"}},
		map[string]any{"type": "document", "title": "n.md", "source": map[string]any{"type": "text", "media_type": "text/plain", "data": "# N"}},
		map[string]any{"type": "text", "text": req.Messages[0].Content, "cache_control": map[string]any{"type": "ephemeral"}},
	}
	if d := cmp.Diff(want, got["content"]); d != "" {
		t.Errorf("first user message (-want +got):\n%s", d)
	}
}

func TestCheckAttachments(t *testing.T) {
	for _, tc := range []struct {
		a    provider.Attachment
		want string
	}{
		{provider.Attachment{Kind: provider.AttachAudio, MIME: "audio/wav", Name: "a.wav"}, "use gemini for audio and video"},
		{provider.Attachment{Kind: provider.AttachVideo, MIME: "video/mp4", Name: "v.mp4"}, "use gemini for audio and video"},
		{provider.Attachment{Kind: provider.AttachImage, MIME: "image/bmp", Name: "b.bmp"}, "JPEG, PNG, GIF and WEBP"},
		{provider.Attachment{Kind: provider.AttachImage, MIME: "image/png", Name: "big.png", Data: make([]byte, maxImageBytes+1)}, "up to 5.0 MB"},
		{provider.Attachment{Kind: provider.AttachDocument, MIME: "application/msword", Name: "d.doc"}, "convert it to PDF"},
		{provider.Attachment{Kind: provider.AttachDocument, MIME: "application/pdf", Name: "huge.pdf", Data: make([]byte, 25<<20)}, "over the 32.0 MB"},
	} {
		err := CheckAttachments("claude", []provider.Attachment{tc.a})
		if !provider.IsFatal(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.a.Name, err, tc.want)
		}
	}
	if err := CheckAttachments("claude", []provider.Attachment{{Kind: provider.AttachImage, MIME: "image/webp", Name: "ok.webp", Data: []byte("x")}}); err != nil {
		t.Error(err)
	}
}
