"""The trainer side of the Itô trainer protocol (docs/trainer-protocol.md), for Python training loops.

Dependency-free, Python 3.8+. A training loop imports it to read its task and to speak to the node agent::

    import ito_trainer_protocol as ito

    task = ito.load_task()                     # --task <file> or ITO_TASK_FILE; starts listening for stop lines
    spec = task["spec"]
    for step in range(spec["start_step"] + 1, spec["total_steps"] + 1):
        if ito.stop_requested():
            if ito.checkpoint_on_stop():
                ...save, then ito.checkpoint(step=..., uri=..., nbytes=..., save_seconds=..., final=True)
            break
        ...train one step...
        ito.progress(step=step, tokens=step * spec["step_tokens"], loss=loss, elapsed_s=ito.clock())

Every line is written whole and flushed at once, from any thread. Values are checked before they are written, so
a mistake raises ValueError here instead of becoming a line the agent ignores.
"""

import json
import math
import os
import queue
import re
import sys
import threading
import time

PROTOCOL = "ito.trainer/v1"
MAX_LINE_BYTES = 64 * 1024
# Control lines are short; the agent's answers to RLVR's want_batches carry up to 4 batches.
MAX_CONTROL_LINE_BYTES = 8 * 1024 * 1024
_FORBIDDEN_KEYS = ("__proto__", "constructor", "prototype")
_UNSAFE_URI_CHARS = set("%?#\\")
_METRIC_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")

_write_lock = threading.Lock()
_stop = threading.Event()
_stop_checkpoint = [False]
_listener = []
_replies = queue.Queue()
_REPLY_TYPES = ("rollout_ack", "policy_ack", "batches", "exchange_refused")
_started = time.monotonic()


# ---- reading the task -------------------------------------------------------------------------------------------

def _strict_pairs(pairs):
    """One JSON document, one meaning: duplicate keys and prototype-reaching keys are refused."""
    result = {}
    for key, value in pairs:
        if key in result:
            raise ValueError("duplicate key in JSON")
        if key in _FORBIDDEN_KEYS:
            raise ValueError("forbidden key in JSON")
        result[key] = value
    return result


def parse_json(text):
    """Parses JSON text strictly (no duplicate keys, no NaN or Infinity)."""

    def no_constants(name):
        raise ValueError("non-finite number in JSON")

    return json.loads(text, object_pairs_hook=_strict_pairs, parse_constant=no_constants)


def task_file_path(argv=None):
    """The task file: the value of --task, else ITO_TASK_FILE."""
    argv = sys.argv[1:] if argv is None else argv
    for i, arg in enumerate(argv):
        if arg == "--task" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--task="):
            return arg[len("--task="):]
    path = os.environ.get("ITO_TASK_FILE")
    if not path:
        raise ValueError("no task: pass --task <file> or set ITO_TASK_FILE")
    return path


def load_task(argv=None, listen=True):
    """Reads the assignment the agent wrote (its `spec` is the task) and starts listening for stop lines."""
    with open(task_file_path(argv), "r", encoding="utf-8") as f:
        task = parse_json(f.read())
    if not isinstance(task, dict) or not isinstance(task.get("spec"), dict):
        raise ValueError("the task file is not an assignment")
    if listen:
        start_listening()
    return task


def time_scale():
    """ITO_TIME_SCALE: how many seconds the trainer's clock runs per wall second (1 unless a test or demo says)."""
    text = os.environ.get("ITO_TIME_SCALE", "1") or "1"
    value = float(text)
    if not (value > 0 and math.isfinite(value)):
        raise ValueError("ITO_TIME_SCALE must be a positive number")
    return value


def clock():
    """Seconds on the trainer's clock since this module was loaded: wall seconds x ITO_TIME_SCALE."""
    return (time.monotonic() - _started) * time_scale()


# ---- checkpoint storage (file:// only; other stores need their own client) --------------------------------------

def checkpoint_uri(spec, step):
    """Where the checkpoint at `step` goes: <storage>/<run id>/<stage>/step-<n>."""
    return "%s/%s/%s/step-%d" % (spec["checkpoint"]["storage"].rstrip("/"), spec["run_id"], spec["stage"], step)


def file_path(uri):
    """The absolute path a file:///abs/path URI names; refuses hosts, relative paths, ., .., //, NUL and %?#\\."""
    if not isinstance(uri, str) or not uri.startswith("file://"):
        raise ValueError("not a file:// URI")
    path = uri[len("file://"):]
    if not path.startswith("/"):
        raise ValueError("file URI must be file:///absolute/path (no host, no relative path)")
    if any(ord(c) < 0x20 or ord(c) == 0x7F or c in _UNSAFE_URI_CHARS for c in path):
        raise ValueError("file URI contains NUL, a control character, %, ?, # or a backslash")
    segments = path[1:].split("/")
    for segment in segments:
        if segment in (".", ".."):
            raise ValueError("file URI has a . or .. segment")
        if segment == "":
            raise ValueError("file URI has an empty segment or names a directory")
    return path


def write_object(uri, data):
    """Writes bytes at a file:// URI atomically (temp file, fsync, rename); directories 0700, the file 0600."""
    path = file_path(uri)
    directory = os.path.dirname(path)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    temp = os.path.join(directory, ".%s.%s.tmp" % (os.path.basename(path), os.urandom(6).hex()))
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return len(data)


def read_object(uri):
    """The bytes at a file:// URI, never through a symlink."""
    fd = os.open(file_path(uri), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as f:
        return f.read()


# ---- checkpoints the agent moves (any store the agent has a driver for) -----------------------------------------

def work_dir():
    """ITO_WORK_DIR: this task's own directory, where checkpoint files are written for the agent to upload; None
    when the trainer runs without an agent (it then writes file:// objects itself)."""
    return os.environ.get("ITO_WORK_DIR") or None


def resume_file():
    """ITO_RESUME_FILE: the checkpoint of `resume_from`, downloaded by the agent before the trainer started; or None."""
    return os.environ.get("ITO_RESUME_FILE") or None


def init_file():
    """ITO_INIT_FILE: the checkpoint of `init_from`, downloaded by the agent before the trainer started; or None."""
    return os.environ.get("ITO_INIT_FILE") or None


def write_checkpoint_file(name, data):
    """Writes bytes to `name` (relative, e.g. "checkpoints/step-40") in the task's directory, atomically; returns
    the relative name, for checkpoint_file. The file is the agent's once reported: it uploads, then removes it."""
    root = work_dir()
    if root is None:
        raise ValueError("no ITO_WORK_DIR: checkpoint files are for trainers run by the agent")
    segments = name.split("/")
    if any(s in ("", ".", "..") for s in segments) or any(ord(c) < 0x20 or c == "\\" for c in name):
        raise ValueError("a checkpoint file name is a relative path without ., .. or empty segments")
    write_object("file://" + os.path.join(root, *segments), data)
    return name


# ---- writing protocol lines ------------------------------------------------------------------------------------

def _count(name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError("%s must be a whole number of at least 0" % name)
    return value


def _number(name, value, minimum=0.0):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < minimum:
        raise ValueError("%s must be a finite number of at least %s" % (name, minimum))
    return float(value)


def _emit(line):
    text = json.dumps(line, separators=(",", ":"), allow_nan=False)
    if len(text.encode("utf-8")) > MAX_LINE_BYTES:
        raise ValueError("a protocol line may not exceed 64 KiB")
    with _write_lock:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def progress(step, tokens, elapsed_s, loss=None, throughput_tokens_per_s=None, message=None):
    """Training progress: step and tokens so far (of the whole job), seconds on the trainer's clock."""
    line = {"type": "progress", "step": _count("step", step), "tokens": _count("tokens", tokens), "elapsed_s": _number("elapsed_s", elapsed_s)}
    if loss is not None:
        line["loss"] = _number("loss", loss)
    if throughput_tokens_per_s is not None:
        line["throughput_tokens_per_s"] = _number("throughput_tokens_per_s", throughput_tokens_per_s)
    if message is not None:
        line["message"] = str(message)[:512]
    _emit(line)


def _emit_checkpoint(line, save_seconds, async_save, final, elapsed_s):
    """The fields a checkpoint line and a checkpoint file line share, then the line."""
    line["save_seconds"] = _number("save_seconds", save_seconds)
    line["async"] = bool(async_save)
    if final:
        line["final"] = True
    if elapsed_s is not None:
        line["elapsed_s"] = _number("elapsed_s", elapsed_s)
    _emit(line)


def checkpoint(step, uri, nbytes, save_seconds, async_save=False, final=False, elapsed_s=None):
    """A checkpoint that is fully written and can be restored from. `final` only for the one a stop asked for."""
    line = {
        "type": "checkpoint",
        "step": _count("step", step),
        "uri": str(uri),
        "bytes": _count("nbytes", nbytes),
    }
    _emit_checkpoint(line, save_seconds, async_save, final, elapsed_s)


def checkpoint_file(step, path, save_seconds, async_save=False, final=False, elapsed_s=None):
    """A checkpoint written whole to `path` in the task's directory: the agent uploads it to the run's storage and
    reports it once uploaded (with the bytes it moved; the upload's seconds are added to save_seconds)."""
    line = {
        "type": "checkpoint_file",
        "step": _count("step", step),
        "path": str(path),
    }
    _emit_checkpoint(line, save_seconds, async_save, final, elapsed_s)


def restored(step, nbytes, restore_seconds):
    """The checkpoint `resume_from` names was restored, before the first step: once, with what it read and how long."""
    _emit({"type": "restored", "step": _count("step", step), "bytes": _count("nbytes", nbytes), "restore_seconds": _number("restore_seconds", restore_seconds)})


def metrics(values, step=None):
    """Evaluation scores; the last metrics line before a clean exit is the task's result. Report only real ones."""
    checked = {}
    for name, value in values.items():
        if not isinstance(name, str) or not _METRIC_NAME.match(name):
            raise ValueError("metric names are 1 to 64 lower-case letters, digits, _ . or -")
        checked[name] = _number(name, value, minimum=-math.inf)
    line = {"type": "metrics", "metrics": checked}
    if step is not None:
        line["step"] = _count("step", step)
    _emit(line)


def log(message):
    """A line for the agent's own log (never the ledger)."""
    _emit({"type": "log", "message": str(message)[:2048]})


# ---- hearing stop requests -------------------------------------------------------------------------------------

def _control_lines(fd):
    """Lines read from a raw file descriptor. Unbuffered on purpose: a daemon thread blocked inside a buffered
    reader makes the interpreter abort at exit, one blocked in os.read does not. Over-long lines are dropped."""
    pending = b""
    dropping = False
    while True:
        chunk = os.read(fd, 4096)
        if not chunk:
            return
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            if not dropping:
                yield line
            dropping = False
        if len(pending) > MAX_CONTROL_LINE_BYTES:
            pending = b""
            dropping = True


def _listen(fd):
    for line in _control_lines(fd):
        try:
            message = parse_json(line.decode("utf-8"))
        except ValueError:
            continue
        if isinstance(message, dict) and message.get("type") in _REPLY_TYPES:
            _replies.put(message)
        elif isinstance(message, dict) and set(message) == {"type", "checkpoint"} and message["type"] == "stop" and isinstance(message["checkpoint"], bool):
            _stop_checkpoint[0] = message["checkpoint"]
            _stop.set()
    _replies.put(None)


def start_listening(fd=None):
    """Starts the daemon thread that reads control lines from stdin (once; load_task calls it)."""
    with _write_lock:
        if _listener:
            return
        thread = threading.Thread(target=_listen, args=(sys.stdin.fileno() if fd is None else fd,), name="ito-stop-listener", daemon=True)
        _listener.append(thread)
    thread.start()


def stop_requested():
    """True once the agent has asked the trainer to stop."""
    start_listening()
    return _stop.is_set()


def checkpoint_on_stop():
    """Whether the stop asked for a final checkpoint first."""
    return _stop_checkpoint[0]


# ---- RLVR: the exchange between trainer and rollout (docs/trainer-protocol.md, "RLVR") -------------------------

def _exchange(line):
    """Writes one exchange request and waits for the agent's answer (one request at a time)."""
    start_listening()
    _emit(line)
    reply = _replies.get()
    if reply is None:
        raise RuntimeError("the agent closed stdin before answering")
    if reply["type"] == "exchange_refused":
        raise RuntimeError("the control plane refused the exchange (%s)" % str(reply.get("code", "error"))[:64])
    return reply


def post_rollout_batch(policy_version, samples, dropped_groups=0):
    """Rollout: posts completions (dicts of group, prompt, completion, reward, logprob, tokens) sampled by
    `policy_version`. Answers {"policy": {"version", "uri"}, "trainer_done"}."""
    if not 1 <= len(samples) <= 256:
        raise ValueError("a batch holds 1 to 256 samples")
    return _exchange({"type": "rollout_batch", "policy_version": _count("policy_version", policy_version), "samples": list(samples), "dropped_groups": _count("dropped_groups", dropped_groups)})


def publish_policy(version, uri):
    """Trainer (rank 0): the next policy version, its weights written under the run's checkpoint storage."""
    return _exchange({"type": "policy", "version": _count("version", version), "uri": str(uri)})


def want_batches(policy_version, wait_s=5, max_batches=1):
    """Trainer (rank 0): batches within the staleness bound of `policy_version` (the one it published last).
    Answers {"batches": [...], "rejected": [...]}; waits up to `wait_s` seconds for one."""
    if not 0 <= int(wait_s) <= 30 or not 1 <= int(max_batches) <= 4:
        raise ValueError("wait_s is 0 to 30 and max_batches 1 to 4")
    return _exchange({"type": "want_batches", "policy_version": _count("policy_version", policy_version), "wait_s": int(wait_s), "max": int(max_batches)})
