package cliagent

import (
	"testing"

	"massgen/internal/config"
)

// The CLIs this package runs are exactly the backend table's implemented CLI types.
func TestFlavours_MatchTheBackendTable(t *testing.T) {
	for name, bt := range config.BackendTypes {
		cli := bt.Protocol == config.ProtocolCLI
		if _, ok := flavours[name]; ok != (cli && bt.Implemented) {
			t.Errorf("%s: flavour %v, but the table says CLI %v, implemented %v", name, ok, cli, bt.Implemented)
		}
	}
	for name := range flavours {
		if config.BackendTypes[name].Protocol != config.ProtocolCLI {
			t.Errorf("flavour %s is not a CLI type of the backend table", name)
		}
	}
}
