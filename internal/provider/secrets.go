package provider

import "massgen/internal/redact"

// Redactor removes the backend's key and its base URL's credentials from whatever a service
// says back, in every form redact knows (echoed without its prefix, in part, masked).
func (o Options) Redactor() *redact.Redactor {
	return redact.New(append(redact.URLSecrets(o.BaseURL), o.APIKey)...)
}
