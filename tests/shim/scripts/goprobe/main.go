// Built with go build at test time: a program the shim can not load into, and
// whose os/exec spawns with raw syscalls. It reads the key itself, then
// starts `bash -c 'cat "$CF_T_KEY"'` and `cat ALLOWED`.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

func run(args ...string) int {
	c := exec.Command(args[0], args[1:]...)
	c.Stdout = os.Stdout
	c.Stderr = os.Stderr
	if err := c.Run(); err != nil {
		if e, ok := err.(*exec.ExitError); ok {
			return e.ExitCode()
		}
		fmt.Println("GO_RUN", err)
		return -1
	}
	return 0
}

func main() {
	data, err := os.ReadFile(os.Getenv("CF_T_KEY"))
	switch {
	case err == nil:
		fmt.Print(string(data))
		fmt.Println("GO_OPEN readable")
	case errors.Is(err, syscall.EACCES):
		fmt.Println("GO_OPEN EACCES")
	default:
		fmt.Println("GO_OPEN", err)
	}
	deny := run("/bin/bash", "-c", `cat "$CF_T_KEY"`)
	legit := run("cat", os.Getenv("CF_T_ALLOWED"))
	fmt.Printf("CASE go deny=%d legit=%d\n", deny, legit)
}
