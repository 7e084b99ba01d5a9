package libloop

// Future is a placeholder until futures land (issue 3).
type Future struct{}
