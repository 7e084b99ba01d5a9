// SPDX-License-Identifier: MIT

package libloop

import "context"

// RunUntilCompleteContext is RunUntilComplete bounded by ctx: once ctx is
// done, f is cancelled from the loop thread (a posted callback: the
// library's thread rules hold) and the run goes on until f is done. It
// returns ctx.Err() when f ended cancelled after ctx was done, nil when f
// finished anyway, and RunUntilComplete's errors otherwise.
func (l *Loop) RunUntilCompleteContext(ctx context.Context, f *Future) error {
	if ctx == nil || f == nil {
		return EINVAL
	}
	ended := false // the loop thread's, as the posted callback
	stop := context.AfterFunc(ctx, func() {
		l.CallSoonThreadsafe(func() {
			if !ended {
				f.Cancel(ctx.Err().Error())
			}
		})
	})
	err := l.RunUntilComplete(f)
	ended = true
	stop()
	if err != nil {
		return err
	}
	if st, serr := f.State(); serr == nil && st == Cancelled && ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}
