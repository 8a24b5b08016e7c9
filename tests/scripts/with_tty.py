"""Runs a program with a pseudo-terminal as its controlling terminal, while its stdin and
stdout stay the pipes this script was given (the MCP protocol). Whenever the program writes a
question ending in "allow? ..." to the terminal, the next answer from argv[1] (comma-separated;
"-" means: say nothing) is typed. Everything the terminal showed is copied to stderr.

    python3 with_tty.py ANSWERS PROGRAM [ARGS...]
"""
import os
import sys

answers = [a for a in sys.argv[1].split(",") if a]
program = sys.argv[2:]

master, slave = os.openpty()
slave_name = os.ttyname(slave)
pid = os.fork()
if pid == 0:
    os.setsid()
    # Opening a terminal as a session leader without one makes it the controlling terminal.
    tty = os.open(slave_name, os.O_RDWR)
    os.close(tty)
    os.close(slave)
    os.close(master)
    os.execvp(program[0], program)

# The parent keeps its end of the slave open: were every slave descriptor closed for a moment
# (between the child's exec and its opening of /dev/tty), reading the master would fail.
import select

seen = b""
status = None
while status is None:
    ready, _, _ = select.select([master], [], [], 0.05)
    if ready:
        chunk = os.read(master, 4096)
        sys.stderr.buffer.write(chunk)
        sys.stderr.flush()
        seen += chunk
        while b"allow?" in seen:
            seen = seen[seen.index(b"allow?") + 6:]
            answer = answers.pop(0) if answers else "-"
            if answer != "-":
                os.write(master, answer.encode() + b"\n")
    done, wait_status = os.waitpid(pid, os.WNOHANG)
    if done:
        status = wait_status
sys.exit(os.waitstatus_to_exitcode(status))
