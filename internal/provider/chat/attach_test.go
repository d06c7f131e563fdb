package chat

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/provider"
	"massgen/internal/provider/providertest"
)

// upload_files on Chat Completions, as MassGen's formatter sends them: image_url, input_audio
// and video_url parts before the text of the first user message.
func TestToWire_Attachments(t *testing.T) {
	req := providertest.Request()
	req.Messages = append(req.Messages, provider.Message{Role: provider.RoleUser, Content: "later"})
	req.Attachments = []provider.Attachment{
		{Kind: provider.AttachImage, MIME: "image/jpeg", Name: "a.jpg", Data: []byte{0xff, 0xd8}},
		{Kind: provider.AttachAudio, MIME: "audio/mpeg", Name: "b.mp3", Data: []byte("ID3")},
		{Kind: provider.AttachVideo, MIME: "video/mp4", Name: "c.mp4", Data: []byte("mp4")},
	}
	params, err := toWire(provider.Options{Type: "chatcompletion", Model: "m"}, req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatal(err)
	}
	want := []any{
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/jpeg;base64,/9g="}},
		map[string]any{"type": "input_audio", "input_audio": map[string]any{"data": "SUQz", "format": "mp3"}},
		map[string]any{"type": "video_url", "video_url": map[string]any{"url": "data:video/mp4;base64,bXA0"}},
		map[string]any{"type": "text", "text": req.Messages[0].Content},
	}
	if d := cmp.Diff(want, body.Messages[1]["content"]); d != "" {
		t.Errorf("first user message (-want +got):\n%s", d)
	}
	if body.Messages[2]["content"] != "later" {
		t.Errorf("a later message carries the files too: %v", body.Messages[2])
	}
}

func TestToWire_AttachmentsRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		a     provider.Attachment
		store bool
		want  string
	}{
		{"document", provider.Attachment{Kind: provider.AttachDocument, MIME: "application/pdf", Name: "r.pdf"}, false, "has no file search"},
		{"ogg audio", provider.Attachment{Kind: provider.AttachAudio, MIME: "audio/ogg", Name: "a.ogg"}, false, "wav and mp3"},
		{"a vector store", provider.Attachment{Kind: provider.AttachImage, MIME: "image/png", Name: "a.png"}, true, "has no file search"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := providertest.Request()
			req.Attachments = []provider.Attachment{tc.a}
			if tc.store {
				req.FileSearch = []string{"vs_1"}
			}
			p, err := New(provider.Options{Type: "groq", Model: "m", APIKey: "k", BaseURL: "http://127.0.0.1:1/v1"})
			if err != nil {
				t.Fatal(err)
			}
			r := providertest.Collect(t.Context(), p, req)
			if !provider.IsFatal(r.Err) || !strings.Contains(r.Err.Error(), tc.want) || strings.Count(r.Err.Error(), "groq:") != 1 {
				t.Errorf("err = %v, want one fatal error saying %q", r.Err, tc.want)
			}
		})
	}
}
