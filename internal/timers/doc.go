// SPDX-License-Identifier: MIT

// Package timers is what every timer queue of libloop shares: the order of
// timers (deadline, then scheduling sequence), one 4-ary heap and one
// chunked FIFO, generic over what a timer carries, the queue made of the
// two, and the deadline rules (which delays are refused, how seconds
// become loop nanoseconds, when a timer is due).
//
// Its users are the core's handle timers (Queue[*Handle]), its handle-less
// host timers (Queue of a function and an argument), and capi's handle
// timers whose records live in C (a Heap of slots beside a FIFO of
// segments of consecutive slots). capi's C fast paths keep a copy of the
// deadline rules; capi's tests check it against this one.
//
// A leaf package: it imports nothing of libloop's, so both libloop and
// capi import it.
package timers
