//go:build linux

package anviltest

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts anvil into its own process group, so that Stop can
// kill it with everything it spawned, and asks the kernel to kill it should
// the test binary die first (a test timeout panics without cleanups).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killProcessGroup kills the process group led by cmd's process.
func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		_ = cmd.Process.Kill()
	}
}
