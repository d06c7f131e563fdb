package anthropic

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"massgen/internal/provider"
	"massgen/internal/provider/providertest"
)

// TestStream_KeyEchoedWithoutPrefix: a proxy that quotes the key without its "sk-ant-" prefix
// must not get it into the error, which every sink shows.
func TestStream_KeyEchoedWithoutPrefix(t *testing.T) {
	const key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"
	for name, quoted := range map[string]string{
		"prefix dropped": key[len("sk-ant-"):],
		"tail only":      key[20:],
		"masked":         "api03-abc...6789",
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = io.WriteString(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key `+quoted+`"}}`)
			}))
			defer srv.Close()
			p, err := New(provider.Options{Type: Type, Model: "m", APIKey: key, KeyEnv: KeyEnv, BaseURL: srv.URL, MaxRetries: 1})
			if err != nil {
				t.Fatal(err)
			}
			r := providertest.Collect(t.Context(), p, providertest.Request())
			if r.Err == nil {
				t.Fatal("no error")
			}
			msg := r.Err.Error()
			if strings.Contains(msg, quoted) || strings.Contains(msg, key[25:35]) || !strings.Contains(msg, "[redacted]") || !strings.Contains(msg, KeyEnv) {
				t.Errorf("error shows the key or lost its advice: %s", msg)
			}
		})
	}
}

// TestNew_BaseURLCredentialsNotShown: a rejected base_url is quoted without its password.
func TestNew_BaseURLCredentialsNotShown(t *testing.T) {
	_, err := New(provider.Options{APIKey: "k", BaseURL: "ftp://user:hunter2@proxy.example/?key=s3cr3tvalue"})
	if err == nil || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "s3cr3tvalue") {
		t.Fatalf("err = %v", err)
	}
}
