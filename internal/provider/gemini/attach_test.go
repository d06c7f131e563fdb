package gemini

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/provider"
	"massgen/internal/provider/providertest"
)

// upload_files on generateContent: inlineData parts before the text of the first user
// content, every kind Gemini reads; a text document goes as text/plain.
func TestStream_Attachments(t *testing.T) {
	url, reqs := captureServer(t, providertest.Transcript(t, "text.sse"))
	p := newTest(t, provider.Options{BaseURL: url, APIKey: "k", Model: "gemini-2.5-flash"})
	req := providertest.Request()
	req.Attachments = []provider.Attachment{
		{Kind: provider.AttachImage, MIME: "image/png", Name: "a.png", Data: []byte("\x89PNG")},
		{Kind: provider.AttachAudio, MIME: "audio/wav", Name: "b.wav", Data: []byte("RIFF")},
		{Kind: provider.AttachVideo, MIME: "video/mp4", Name: "c.mp4", Data: []byte("mp4")},
		{Kind: provider.AttachDocument, MIME: "text/plain", Name: "d.py", Data: []byte("print(1)")},
	}
	got := sent(t, p, reqs, req).Body["contents"].([]any)[0].(map[string]any)["parts"]
	want := []any{
		map[string]any{"inlineData": map[string]any{"mimeType": "image/png", "data": "iVBORw=="}},
		map[string]any{"inlineData": map[string]any{"mimeType": "audio/wav", "data": "UklGRg=="}},
		map[string]any{"inlineData": map[string]any{"mimeType": "video/mp4", "data": "bXA0"}},
		map[string]any{"inlineData": map[string]any{"mimeType": "text/plain", "data": "cHJpbnQoMSk="}},
		map[string]any{"text": req.Messages[0].Content},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("first content (-want +got):\n%s", d)
	}
}

func TestCheckAttachments(t *testing.T) {
	for _, tc := range []struct {
		files []provider.Attachment
		want  string
	}{
		{[]provider.Attachment{{Kind: provider.AttachImage, MIME: "image/gif", Name: "a.gif"}}, "PNG, JPEG, WEBP, HEIC and HEIF"},
		{[]provider.Attachment{{Kind: provider.AttachDocument, MIME: "application/msword", Name: "d.doc"}}, "convert it to PDF"},
		{[]provider.Attachment{{Kind: provider.AttachVideo, MIME: "video/mp4", Name: "a.mp4", Data: make([]byte, 10<<20)},
			{Kind: provider.AttachVideo, MIME: "video/mp4", Name: "b.mp4", Data: make([]byte, 6<<20)}}, "over the 20.0 MB"},
	} {
		err := CheckAttachments("gemini", tc.files)
		if !provider.IsFatal(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.files[0].Name, err, tc.want)
		}
	}
}
