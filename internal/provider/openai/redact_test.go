package openai

import (
	"strings"
	"testing"

	"massgen/internal/provider"
)

// TestStream_KeyEchoedWithoutPrefix: a server (or proxy) that quotes the key without its "sk-"
// prefix, or only part of it, must not get it into the error, which every sink shows.
func TestStream_KeyEchoedWithoutPrefix(t *testing.T) {
	const key = "sk-abcdefghijklmnopqrstuvwxyz0123456789" // 39 characters
	for name, quoted := range map[string]string{
		"last 36 of 39": key[3:],
		"first 20":      key[:20],
		"masked":        "abcd****6789",
	} {
		t.Run(name, func(t *testing.T) {
			body := `{"error":{"message":"Incorrect API key provided: ` + quoted + `.","type":"invalid_request_error","code":"invalid_api_key"}}`
			url, _ := server(t, 401, "application/json", body)
			r := collect(t, newProvider(t, provider.Options{Type: "openai", APIKey: key, KeyEnv: "OPENAI_API_KEY", BaseURL: url + "/v1"}))
			if r.Err == nil {
				t.Fatal("no error")
			}
			msg := r.Err.Error()
			if strings.Contains(msg, quoted) || strings.Contains(msg, key[10:20]) || !strings.Contains(msg, "[redacted]") || !strings.Contains(msg, "OPENAI_API_KEY") {
				t.Errorf("error shows the key or lost its advice: %s", msg)
			}
		})
	}
}
