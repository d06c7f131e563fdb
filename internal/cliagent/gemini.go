package cliagent

import "massgen/internal/provider"

var geminiFlavour = flavour{binary: "gemini", npm: "@google/gemini-cli", minVersion: "0.61.0",
	invocation: func(*Agent, provider.Request, string, string) (invocation, error) { return invocation{}, errTODO },
	newParser:  func(*Agent) parser { return nil }}
