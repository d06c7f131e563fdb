package chat

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/openai/openai-go/v3/option"

	"massgen/internal/provider"
	"massgen/internal/redact"
)

// Azure is the backend type of Azure OpenAI's chat completions.
const Azure = "azure_openai"

// azureOptions point the client at an Azure OpenAI resource: each request goes to
// {endpoint}/openai/deployments/{deployment}/chat/completions?api-version=... (the deployment
// is the request's model, see azureDeployment), with the key in an api-key header and no
// Authorization header. The redirects are kept to the endpoint's origin, so the key reaches
// that host only. Plain http is accepted for this machine only (a local proxy, a test server).
// openai-go's azure package does the same, but links 24 packages of Azure's SDK for its
// token credentials, which massgen does not offer.
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
	if u.Scheme == "http" && !loopback(u.Hostname()) {
		return nil, fmt.Errorf("chat: azure_openai: endpoint %q must use https (http only for a server on this machine)", redact.URL(o.BaseURL))
	}
	return []option.RequestOption{option.WithHeader("api-key", o.APIKey), option.WithQuery("api-version", o.APIVersion),
		option.WithHTTPClient(sameOriginRedirects(client))}, nil
}

// azureDeployment is the base URL of one deployment of the resource at endpoint, to which the
// SDK adds chat/completions. The name is one path segment: a "/" in it is escaped, and "." or
// ".." (which would climb out of the deployments) are refused.
func azureDeployment(endpoint *url.URL, deployment string) (option.RequestOption, error) {
	if deployment == "" || deployment == "." || deployment == ".." {
		return nil, fmt.Errorf("chat: azure_openai: %q is not a deployment name: set model to the deployment's name", deployment)
	}
	return option.WithBaseURL(endpoint.JoinPath("openai", "deployments", url.PathEscape(deployment)).String() + "/"), nil
}

// sameOriginRedirects is a copy of c that follows a redirect only within the first request's
// origin, port included (a local server must not send the key on to another local port).
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
