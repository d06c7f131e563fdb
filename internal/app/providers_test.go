package app

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"massgen/internal/config"
	"massgen/internal/provider"
)

// Every type the config runs has a constructor, reached through its protocol, and its
// requests go where BaseURL sends them: to the SDK's base-URL variable when the type has one.
// A coding-agent CLI is only constructed: running it needs its binary.
func TestNewProvider_EveryImplementedType(t *testing.T) {
	for name, bt := range config.BackendTypes {
		if !bt.Implemented {
			continue
		}
		t.Run(name, func(t *testing.T) {
			hits := make(chan string, 8)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits <- r.URL.Path
				http.Error(w, `{"error": {"message": "refused by the test"}}`, http.StatusBadRequest)
			}))
			t.Cleanup(srv.Close)
			b := config.Backend{Type: name, Model: bt.DefaultModel, BaseURL: bt.DefaultBaseURL}
			if bt.Protocol == config.ProtocolScripted {
				b.Script = &config.Script{}
			}
			getenv := env(nil)
			if bt.BaseURLEnv != "" {
				getenv = env(map[string]string{bt.BaseURLEnv: srv.URL})
			} else if b.BaseURL != "" {
				b.BaseURL = srv.URL
			}
			u, from, err := BaseURL(b, getenv)
			if err != nil {
				t.Fatal(err)
			}
			if bt.BaseURLEnv != "" && (u != srv.URL || from != bt.BaseURLEnv) {
				t.Errorf("BaseURL = %q from %q, want the test server from %s", u, from, bt.BaseURLEnv)
			}
			b.BaseURL = u
			p, err := NewProvider(b, "test-key", "TEST_API_KEY")
			if err != nil {
				t.Fatalf("NewProvider: %v", err)
			}
			if bt.Protocol == config.ProtocolCLI || bt.Protocol == config.ProtocolScripted {
				return
			}
			for _, err := range p.Stream(t.Context(), provider.Request{Model: b.Model, Messages: []provider.Message{{Role: provider.RoleUser, Content: "hi"}}}) {
				if err != nil {
					break
				}
			}
			select {
			case <-hits:
			default:
				t.Errorf("no request reached %s", u)
			}
		})
	}
}
