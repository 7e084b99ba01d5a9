// SPDX-License-Identifier: MIT

//go:build stackreuse && !valgrind

package main

// annotated: built without the Go runtime's valgrind annotations.
const annotated = false
