module github.com/libloop/libloop

go 1.26.0

require (
	github.com/ebitengine/purego v0.11.3
	golang.org/x/sys v0.49.0
)

require golang.org/x/net v0.62.0
