// SPDX-License-Identifier: MIT

package libloop

import (
	"testing"
	"unsafe"
)

// TestFutureSize logs the record sizes every future and task pay for
// (go test -v -run FutureSize).
func TestFutureSize(t *testing.T) {
	t.Logf("Future %d bytes, Task %d bytes, Handle %d bytes",
		unsafe.Sizeof(Future{}), unsafe.Sizeof(Task{}), unsafe.Sizeof(Handle{}))
}
