//go:build !linux

package anviltest

import "os/exec"

// setProcessGroup is a no-op where process groups are not portable; the
// npm anvil package is linux/amd64 only, so this path serves only an anvil
// named by FISCAL402_ANVIL.
func setProcessGroup(cmd *exec.Cmd) {}

// killProcessGroup kills anvil itself (it spawns no children).
func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
