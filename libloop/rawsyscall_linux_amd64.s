// SPDX-License-Identifier: MIT

#include "textflag.h"

// func rawSyscall4(trap, a1, a2, a3, a4 uintptr) (r, errno uintptr)
//
// The Linux system call instruction and the errno test, nothing else
// (rawsyscall_linux_amd64.go).
TEXT ·rawSyscall4(SB), NOSPLIT, $0-56
	MOVQ	a1+8(FP), DI
	MOVQ	a2+16(FP), SI
	MOVQ	a3+24(FP), DX
	MOVQ	a4+32(FP), R10
	MOVQ	trap+0(FP), AX
	SYSCALL
	CMPQ	AX, $0xfffffffffffff001
	JLS	ok
	MOVQ	$-1, r+40(FP)
	NEGQ	AX
	MOVQ	AX, errno+48(FP)
	RET
ok:
	MOVQ	AX, r+40(FP)
	MOVQ	$0, errno+48(FP)
	RET
