// SPDX-License-Identifier: MIT

//go:build stackreuse && valgrind

package main

// annotated: built with the Go runtime's valgrind annotations.
const annotated = true
