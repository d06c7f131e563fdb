package app

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"massgen/internal/config"
	"massgen/internal/provider"
	"massgen/internal/provider/anthropic"
	"massgen/internal/provider/chat"
	"massgen/internal/provider/gemini"
	"massgen/internal/provider/openai"
	"massgen/internal/provider/scripted"
	"massgen/internal/redact"
	"massgen/internal/usage"
)

// NewProvider builds the backend of one agent from its config, its key and where the key came
// from (named in errors instead of the key).
func NewProvider(b config.Backend, key, keyEnv string) (provider.Provider, error) {
	o := providerOptions(b, key, keyEnv)
	bt := config.BackendTypes[b.Type]
	if b.BaseURL == "" && bt.Protocol == config.ProtocolChat && bt.BaseURLEnv != "" {
		// azure_openai: every resource has its own endpoint, and there is no default.
		return nil, fmt.Errorf("backend %s has no endpoint: set base_url in the config, or %s", b.Type, bt.BaseURLEnv)
	}
	switch bt.Protocol {
	case config.ProtocolScripted:
		if b.Script == nil {
			return nil, errors.New("scripted backend without a script")
		}
		return scripted.New(*b.Script, b.Model), nil
	case config.ProtocolResponses:
		return openai.New(o)
	case config.ProtocolChat:
		return chat.New(o)
	case config.ProtocolMessages:
		return anthropic.New(o)
	case config.ProtocolGemini:
		return gemini.New(o)
	case config.ProtocolCLI:
		return newCLIAgent(b, key, keyEnv)
	}
	return nil, fmt.Errorf("backend type %q is not supported yet in this build (use type: scripted for offline agents)", b.Type)
}

// BaseURL returns the endpoint agent backend b uses and where it comes from: the config's
// base_url (or --base-url) when it sets one, else the type's variable (BaseURLEnv) when set,
// else the type's default. The config fills in the default when base_url is absent, so a
// base_url equal to the default counts as unset. from is "base_url", a variable name,
// "default", or "" for backends without an endpoint (scripted). A variable that is not an
// http(s) URL is an error naming it.
func BaseURL(b config.Backend, getenv func(string) string) (u, from string, err error) {
	bt := config.BackendTypes[b.Type]
	switch {
	case b.BaseURL != "" && b.BaseURL != bt.DefaultBaseURL:
		return b.BaseURL, "base_url", nil
	case bt.BaseURLEnv != "":
		env := bt.BaseURLEnv
		v := strings.TrimSpace(getenv(env))
		if v == "" {
			break
		}
		if p, perr := url.Parse(v); perr != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return "", env, fmt.Errorf("%s=%q is not an http or https URL (fix or unset it, or set base_url in the config)", env, redact.URL(v))
		}
		return v, env, nil
	}
	if b.BaseURL == "" {
		return "", "", nil
	}
	return b.BaseURL, "default", nil
}

// APIVersion is the API version backend b sends (azure_openai): the config's api_version,
// else the type's variable (AZURE_OPENAI_API_VERSION), else its default; "" for the types
// without one.
func APIVersion(b config.Backend, getenv func(string) string) string {
	bt := config.BackendTypes[b.Type]
	if b.APIVersion != "" || bt.APIVersionEnv == "" {
		return b.APIVersion
	}
	if v := strings.TrimSpace(getenv(bt.APIVersionEnv)); v != "" {
		return v
	}
	return bt.DefaultAPIVersion
}

// CustomEndpoint reports whether b's resolved endpoint is not its type's default. The chat
// type without a default (azure_openai: each resource has its own host) has nothing to differ
// from: the run header still names its endpoint, and a config's base_url still needs trust.
func CustomEndpoint(b config.Backend) bool {
	bt := config.BackendTypes[b.Type]
	if bt.Protocol == config.ProtocolChat && bt.DefaultBaseURL == "" {
		return false
	}
	return b.BaseURL != "" && b.BaseURL != bt.DefaultBaseURL
}

// withBaseURLs returns cfg with every agent's base_url resolved by BaseURL, and its API
// version by APIVersion, so that the provider, the key lookup, the redactor and metadata.json
// all see the endpoint the requests really go to. cfg itself is not changed.
func withBaseURLs(cfg *config.Config, getenv func(string) string) (*config.Config, error) {
	out := *cfg
	out.Agents = slices.Clone(cfg.Agents)
	var errs []error
	bad := map[string]bool{} // a bad variable is reported once, not per agent
	for i, a := range out.Agents {
		u, from, err := BaseURL(a.Backend, getenv)
		if err != nil {
			if !bad[from] {
				errs = append(errs, err)
			}
			bad[from] = true
			continue
		}
		out.Agents[i].Backend.BaseURL = u
		out.Agents[i].Backend.APIVersion = APIVersion(a.Backend, getenv)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, &Error{Code: ExitConfig, Err: err}
	}
	return &out, nil
}

// UnpricedModels lists, once each, the models of cfg's agents that the price table does not
// know (usage.Known): their cost is reported as $0 and max_cost_usd cannot stop them. Views
// that sum a session's cost pass these to view.UsageLine.
func UnpricedModels(cfg *config.Config) []string {
	var out []string
	for _, a := range cfg.Agents {
		if !usage.Known(a.Backend.Type, a.Backend.Model) && !slices.Contains(out, a.Backend.Model) {
			out = append(out, a.Backend.Model)
		}
	}
	return out
}
