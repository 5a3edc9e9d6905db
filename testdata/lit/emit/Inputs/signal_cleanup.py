"""Interrupts a long exir-emit and checks that it leaves nothing behind.

  signal_cleanup.py SIGNAL OUTDIR -- COMMAND...

OUTDIR must hold only `existing.pte` ("left alone"). COMMAND (an exir-emit
writing into OUTDIR, some hundred MB of real weights) is started; as soon as it
has a file in OUTDIR open (its temporary output, named or not: see
/proc/PID/fd), it is stopped (SIGSTOP, so the signal surely lands mid-write),
SIGNAL (INT, TERM or KILL) is sent and it is continued. The tool
must die of that signal, and OUTDIR must again hold only `existing.pte`,
unchanged: no partial output, no `*.tmp.*` temporary, no .ptd.
"""
import os, signal, subprocess, sys, time

sig = getattr(signal, "SIG" + sys.argv[1])
outdir = sys.argv[2]
command = sys.argv[sys.argv.index("--") + 1:]
existing = os.path.join(outdir, "existing.pte")
before = open(existing, "rb").read()

# lit's workers ignore SIGINT, and an ignored signal stays ignored in children
# (the tools keep it so, like nohup): give the tool the default disposition.
restore = None if sig == signal.SIGKILL else (lambda: signal.signal(sig, signal.SIG_DFL))
proc = subprocess.Popen(command, preexec_fn=restore)
deadline = time.time() + 60
real_outdir = os.path.realpath(outdir) + "/"


def writing_into_outdir(pid):
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink("/proc/%d/fd/%s" % (pid, fd)).startswith(real_outdir):
                return True
        except OSError:
            pass
    return False


while True:
    if writing_into_outdir(proc.pid) or any(".tmp." in name for name in os.listdir(outdir)):
        break
    if proc.poll() is not None:
        sys.exit("the tool ended (status %d) before its temporary output appeared" % proc.returncode)
    if time.time() > deadline:
        proc.kill()
        sys.exit("no temporary output appeared within 60 s")
    time.sleep(0.001)
proc.send_signal(signal.SIGSTOP)
if proc.poll() is not None:
    sys.exit("the tool ended (status %d) before the signal: make the emit longer" % proc.returncode)
proc.send_signal(sig)
proc.send_signal(signal.SIGCONT)
status = proc.wait(timeout=60)
problems = []
if status != -sig:
    problems.append("status %d, expected death by signal %d" % (status, sig))
left = sorted(os.listdir(outdir))
if left != ["existing.pte"]:
    problems.append("directory holds %s, expected only existing.pte" % left)
elif open(existing, "rb").read() != before:
    problems.append("existing.pte was changed")
if problems:
    sys.exit("; ".join(problems))
print("clean after SIG%s" % sys.argv[1])
