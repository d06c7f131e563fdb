// Package archtest holds no code, only tests of the repository's shape: which packages may
// import which (layers_test.go) and that README.md's layout names the folders under internal/
// (layout_test.go).
package archtest
