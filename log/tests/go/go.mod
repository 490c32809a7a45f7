// The Go verifier of log/tests/go_interop.rs: checks a toolmark log directory with
// golang.org/x/mod/sumdb/note and golang.org/x/mod/sumdb/tlog.
//
// Built offline (scripts/go-interop) against Debian's golang-golang-x-mod-dev, whose sources land
// in /usr/share/gocode/src/golang.org/x/mod; the packages used import only the standard library
// (crypto/ed25519 is in it since Go 1.13), so nothing else is needed and no go.sum is involved.
module toolmark/log-go-interop

go 1.19

require golang.org/x/mod v0.7.0

replace golang.org/x/mod => /usr/share/gocode/src/golang.org/x/mod
