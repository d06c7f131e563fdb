package app

import (
	"errors"
	"fmt"

	"massgen/internal/config"
	"massgen/internal/provider"
	"massgen/internal/provider/scripted"
)

// NewProvider builds the backend of one agent from its config, its key and where the key came
// from (named in errors instead of the key).
func NewProvider(b config.Backend, key, keyEnv string) (provider.Provider, error) {
	bt := config.BackendTypes[b.Type]
	switch bt.Protocol {
	case config.ProtocolScripted:
		if b.Script == nil {
			return nil, errors.New("scripted backend without a script")
		}
		return scripted.New(*b.Script, b.Model), nil
	}
	return nil, fmt.Errorf("backend type %q is not supported yet in this build (use type: scripted for offline agents)", b.Type)
}
