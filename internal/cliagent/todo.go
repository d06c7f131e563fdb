package cliagent

import "errors"

var errTODO = errors.New("todo")
