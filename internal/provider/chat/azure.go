package chat

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"

	"massgen/internal/provider"
	"massgen/internal/redact"
)

// Azure is the backend type served through openai-go's azure package.
const Azure = "azure_openai"

// azureOptions point the client at an Azure OpenAI resource. openai-go's azure package sends
// each request to {endpoint}/openai/deployments/{model}/chat/completions?api-version=...,
// model being the deployment, with the key in an api-key header; it refuses any request, or
// redirect, that leaves the endpoint's origin, so the key reaches that host only. Plain http
// is accepted for this machine only (a local proxy, a test server), as the package allows.
func azureOptions(o provider.Options, u *url.URL, client *http.Client) ([]option.RequestOption, error) {
	if o.APIKey == "" {
		return nil, errors.New("chat: azure_openai: no API key: set AZURE_OPENAI_API_KEY or api_key in the config")
	}
	if o.APIVersion == "" {
		return nil, errors.New("chat: azure_openai: no api_version")
	}
	if p := strings.TrimSuffix(u.Path, "/"); strings.HasSuffix(p, "/openai") || strings.Contains(p, "/openai/") {
		return nil, fmt.Errorf("chat: azure_openai: endpoint %q ends in an /openai path, which the deployment routes add themselves: "+
			"give the resource's endpoint, such as https://my-resource.openai.azure.com/", redact.URL(o.BaseURL))
	}
	opts := []option.RequestOption{azure.WithEndpoint(o.BaseURL, o.APIVersion), azure.WithAPIKey(o.APIKey),
		option.WithHTTPClient(sameOriginRedirects(client))}
	if u.Scheme == "http" {
		if !loopback(u.Hostname()) {
			return nil, fmt.Errorf("chat: azure_openai: endpoint %q must use https (http only for a server on this machine)", redact.URL(o.BaseURL))
		}
		opts = append(opts, azure.WithUnsafeAllowHTTP())
	}
	return opts, nil
}

// sameOriginRedirects is a copy of c that follows a redirect only within the first request's
// origin, port included: openai-go's azure package compares only the host of a loopback
// endpoint's redirects, so a local server could send the key on to another local port.
func sameOriginRedirects(c *http.Client) *http.Client {
	cp := *c
	next := c.CheckRedirect
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		first := via[0].URL
		if !strings.EqualFold(req.URL.Scheme, first.Scheme) || !strings.EqualFold(req.URL.Host, first.Host) {
			return fmt.Errorf("azure_openai: refused a redirect from %s to another origin (%s), which must not get the key", first.Host, req.URL.Host)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("azure_openai: stopped after 10 redirects")
		}
		return nil
	}
	return &cp
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
