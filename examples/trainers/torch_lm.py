#!/usr/bin/env python3
"""A small decoder-only transformer language model, trained with PyTorch DistributedDataParallel through the agent.

It speaks the Itô trainer protocol (docs/trainer-protocol.md) through ito_trainer_protocol: every rank trains and
writes its progress (the agent reports rank 0's for the job), rank 0 alone checkpoints. The process group comes from the environment the agent sets for a
multi-node stage (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT; gloo on CPU, NCCL with --device cuda); on one node it
trains alone. The text is what data prep wrote for the run (`<storage>/<run>/data/**/*.jsonl|txt` on file://
storage), read as bytes (a 256-token vocabulary); a run without prepared data trains on a fixed synthetic corpus.

Checkpoints hold the model, the optimizer, the step, the data position and the RNG states. They are asynchronous:
the state is copied on the training thread (the time training is blocked), then serialised and written by a
background thread while training goes on; both times are logged, and the write's is reported as save_seconds.
Through the agent the file goes to the task's directory (ITO_WORK_DIR) and the agent uploads it to the run's
storage, file:// or s3://, and downloads the checkpoint a resume or a next stage starts from (ITO_RESUME_FILE,
ITO_INIT_FILE); run alone, it writes and reads file:// objects itself. A resume restores all of it, so the step
after a resume is the checkpoint's step + 1 on the same data.

    python3 torch_lm.py --task <file> [--device cpu|cuda] [--checkpoint-every-steps N] [--progress-every-steps N]
                        [--progress-every-seconds S (0.5; 0: by steps only)] [--step-delay-ms N]
"""

import argparse
import io
import math
import os
import random
import sys
import threading
import time

try:
    import ito_trainer_protocol as ito
except ImportError:  # run from the repository: the protocol module lives with the agent
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "apps", "agent", "python"))
    import ito_trainer_protocol as ito

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

FORMAT = "ito.torch-lm-checkpoint/v1"
VOCAB = 256
CONTEXT = 32
WIDTH = 64
HEADS = 4
LAYERS = 2
BATCH = 16  # sequences per rank per step
LEARNING_RATE = 3e-3
MAX_CORPUS_BYTES = 8 * 1024 * 1024


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(WIDTH)
        self.attn = nn.MultiheadAttention(WIDTH, HEADS, batch_first=True)
        self.ln2 = nn.LayerNorm(WIDTH)
        self.mlp = nn.Sequential(nn.Linear(WIDTH, 4 * WIDTH), nn.GELU(), nn.Linear(4 * WIDTH, WIDTH))

    def forward(self, x, mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.position = nn.Embedding(CONTEXT, WIDTH)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln = nn.LayerNorm(WIDTH)
        self.head = nn.Linear(WIDTH, VOCAB, bias=False)
        self.register_buffer("mask", torch.triu(torch.full((CONTEXT, CONTEXT), float("-inf")), diagonal=1), persistent=False)

    def forward(self, tokens):
        n = tokens.shape[1]
        x = self.embed(tokens) + self.position(torch.arange(n, device=tokens.device))
        for block in self.blocks:
            x = block(x, self.mask[:n, :n])
        return self.head(self.ln(x))


# ---- data ----------------------------------------------------------------------------------------------------------

def synthetic_corpus():
    rng = random.Random("ito-torch-lm/corpus")
    words = ["gpu", "node", "step", "loss", "token", "batch", "shard", "train", "eval", "ledger", "booking", "agent"]
    return " ".join(rng.choice(words) for _ in range(60_000)).encode("utf-8")


def prepared_corpus(spec):
    """
    The bytes data prep kept for this run, in path order, up to MAX_CORPUS_BYTES; None if none. Read where the agent
    put them on this node (ITO_DATA_DIR, when the run's storage is a store the trainer cannot open, such as s3://),
    else in place on file:// storage.
    """
    staged = os.environ.get("ITO_DATA_DIR")
    storage = spec["checkpoint"]["storage"]
    if staged:
        root = staged
    elif storage.startswith("file://"):
        root = os.path.normpath(os.path.join(ito.file_path(storage.rstrip("/") + "/" + spec["run_id"] + "/data/x"), ".."))
    else:
        return None
    if not os.path.isdir(root):
        return None
    chunks, total = [], 0
    for directory, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            if not (name.endswith(".jsonl") or name.endswith(".txt")) or name.startswith("."):
                continue
            path = os.path.join(directory, name)
            if os.path.islink(path):
                continue
            with open(path, "rb") as f:
                for line in f:
                    if name.endswith(".jsonl"):
                        try:
                            doc = ito.parse_json(line.decode("utf-8"))
                        except ValueError:
                            continue
                        text = doc.get("text") if isinstance(doc, dict) else None
                        if not isinstance(text, str):
                            continue
                        data = (text + "\n").encode("utf-8")
                    else:
                        data = line
                    chunks.append(data)
                    total += len(data)
                    if total >= MAX_CORPUS_BYTES:
                        return b"".join(chunks)
    corpus = b"".join(chunks)
    return corpus if len(corpus) > 4 * CONTEXT else None


def split(corpus):
    """The last tenth is held out for evaluation."""
    cut = int(len(corpus) * 0.9)
    return torch.tensor(list(corpus[:cut]), dtype=torch.long), torch.tensor(list(corpus[cut:]), dtype=torch.long)


def batch_at(data, position, rank, world):
    """The rank's share of global batch number `position`: deterministic, so a resume reads the same sequences."""
    g = torch.Generator().manual_seed(1_000_003 * position + 17)
    starts = torch.randint(0, len(data) - CONTEXT - 1, (BATCH * world,), generator=g)[rank * BATCH:(rank + 1) * BATCH]
    x = torch.stack([data[s:s + CONTEXT] for s in starts.tolist()])
    y = torch.stack([data[s + 1:s + CONTEXT + 1] for s in starts.tolist()])
    return x, y


@torch.no_grad()
def heldout(model, data, device):
    model.eval()
    losses, correct, total = [], 0, 0
    for i in range(8):
        x, y = batch_at(data, 10_000_000 + i, 0, 1)
        x, y = x.to(device), y.to(device)
        logits = model(x)
        losses.append(F.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1)).item())
        correct += (logits.argmax(-1) == y).sum().item()
        total += y.numel()
    model.train()
    return sum(losses) / len(losses), correct / total


# ---- checkpoints ---------------------------------------------------------------------------------------------------

def snapshot(model, optimizer, step, position):
    """A copy of everything a resume needs, taken on the training thread (this is what blocks training)."""
    return {
        "format": FORMAT,
        "step": step,
        "position": position,
        "model": {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()},
        "optimizer": _clone(optimizer.state_dict()),
        "rng": {"torch": torch.get_rng_state(), "python": random.getstate()},
    }


def _clone(value):
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu", copy=True)
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clone(v) for v in value]
    return value


class AsyncWriter:
    """Serialises and writes one checkpoint at a time on a background thread; rank 0 only."""

    def __init__(self, spec):
        self.spec = spec
        self.thread = None

    def save(self, state, blocked_s, final=False):
        self.wait()
        self.thread = threading.Thread(target=self._write, args=(state, blocked_s, final), daemon=True)
        self.thread.start()
        if final:
            self.wait()

    def wait(self):
        if self.thread is not None:
            self.thread.join()
            self.thread = None

    def _write(self, state, blocked_s, final):
        started = time.monotonic()
        buffer = io.BytesIO()
        torch.save({**state, "run_id": self.spec["run_id"], "stage": self.spec["stage"]}, buffer)
        data = buffer.getvalue()
        scale = ito.time_scale()
        if ito.work_dir():
            # Through the agent: the file goes to this task's directory and the agent uploads it to the run's
            # storage (file:// or s3://), reporting it once it is there.
            name = ito.write_checkpoint_file("checkpoints/step-%d" % state["step"], data)
            write_s = time.monotonic() - started
            ito.checkpoint_file(step=state["step"], path=name, save_seconds=write_s * scale, async_save=True, final=final, elapsed_s=ito.clock())
        else:
            uri = ito.checkpoint_uri(self.spec, state["step"])
            ito.write_object(uri, data)
            write_s = time.monotonic() - started
            ito.checkpoint(step=state["step"], uri=uri, nbytes=len(data), save_seconds=write_s * scale, async_save=True, final=final, elapsed_s=ito.clock())
        ito.log("checkpoint at step %d: training blocked %.4f s, written in %.4f s (%d bytes)" % (state["step"], blocked_s, write_s, len(data)))


def load(uri, local, spec, expect_step=None):
    """A checkpoint: the file the agent downloaded (`local`), else the file:// object itself (run without an agent)."""
    if local:
        with open(local, "rb") as f:
            data = f.read()
    else:
        data = ito.read_object(uri)
    saved = torch.load(io.BytesIO(data), map_location="cpu")
    if not isinstance(saved, dict) or saved.get("format") != FORMAT or saved.get("run_id") != spec["run_id"]:
        raise ValueError("not a torch-lm checkpoint of this run")
    if expect_step is not None and (saved.get("stage") != spec["stage"] or saved.get("step") != expect_step):
        raise ValueError("resume_from names a checkpoint of another stage or step")
    return saved, len(data)


# ---- the loop ------------------------------------------------------------------------------------------------------

def process_group(device):
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if world > 1:
        if "MASTER_ADDR" not in os.environ or "MASTER_PORT" not in os.environ:
            raise ValueError("a stage on %d nodes needs MASTER_ADDR and MASTER_PORT (the agent sets them)" % world)
        dist.init_process_group("nccl" if device == "cuda" else "gloo", init_method="env://", rank=rank, world_size=world)
    return rank, world


def train(spec, options):
    device = options.device
    rank, world = process_group(device)
    torch.manual_seed(1234)
    prepared = prepared_corpus(spec)
    corpus = prepared or synthetic_corpus()
    train_data, heldout_data = split(corpus)
    if rank == 0:
        ito.log("training on %d bytes of %s text across %d rank(s)" % (len(corpus), "prepared" if prepared else "synthetic", world))
    model = TinyLM().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE)
    step, position = spec["start_step"], spec["start_step"]
    resume, init = spec.get("resume_from"), spec.get("init_from")
    if resume:
        started = time.monotonic()
        saved, nbytes = load(resume["uri"], ito.resume_file(), spec, expect_step=resume["step"])
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        torch.set_rng_state(saved["rng"]["torch"])
        random.setstate(saved["rng"]["python"])
        step, position = saved["step"], saved["position"]
        if rank == 0:
            ito.restored(step=step, nbytes=nbytes, restore_seconds=(time.monotonic() - started) * ito.time_scale())
            ito.log("resumed at step %d" % step)
    elif init:
        saved, _ = load(init["uri"], ito.init_file(), spec)
        model.load_state_dict(saved["model"])
        if rank == 0:
            ito.log("initialised from the checkpoint at step %d of the previous stage" % init["step"])
    ddp = nn.parallel.DistributedDataParallel(model) if world > 1 else model
    writer = AsyncWriter(spec) if rank == 0 else None
    losses, tokens_per_step = [], BATCH * CONTEXT * world
    last_checkpoint = ito.clock()
    last_progress = time.monotonic()
    interval = spec["checkpoint"]["interval_minutes"] * 60
    while step < spec["total_steps"]:
        if ito.stop_requested():
            if writer and ito.checkpoint_on_stop():
                writer.save(snapshot(model, optimizer, step, position), 0.0, final=True)
            ito.log("stopped at step %d" % step)
            break
        x, y = batch_at(train_data, position, rank, world)
        logits = ddp(x.to(device))
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), y.to(device).reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        step += 1
        position += 1
        losses.append(loss.item())
        if options.step_delay_ms:
            time.sleep(options.step_delay_ms / 1000)
        # The first step of an attempt is always reported: after a resume it shows where training picked up.
        # Every rank writes progress: the agent reports rank 0's for the job, and another rank's only feeds its
        # node's heartbeat, so the monitor sees a hang on any rank.
        # And at least every --progress-every-seconds: the monitor samples the step from heartbeats, so a rank whose
        # steps are slow must still show them move well within the misses it is judged on.
        first = step == spec["start_step"] + 1 or (resume and step == resume["step"] + 1)
        if first or step % options.progress_every_steps == 0 or step == spec["total_steps"] or (options.progress_every_seconds and time.monotonic() - last_progress >= options.progress_every_seconds):
            last_progress = time.monotonic()
            ito.progress(step=step, tokens=step * tokens_per_step, loss=sum(losses) / len(losses), elapsed_s=ito.clock())
            losses = []
        every = options.checkpoint_every_steps
        due = (every and step % every == 0) or ito.clock() - last_checkpoint >= interval
        if writer and due and step < spec["total_steps"]:
            blocked = time.monotonic()
            state = snapshot(model, optimizer, step, position)
            writer.save(state, time.monotonic() - blocked)
            last_checkpoint = ito.clock()
    else:
        if writer and step != (resume or {}).get("step"):
            writer.save(snapshot(model, optimizer, step, position), 0.0, final=True)
    if writer:
        writer.wait()
        loss, accuracy = heldout(model, heldout_data, device)
        ito.metrics({"heldout_loss": loss, "accuracy": accuracy}, step=step)
    if world > 1:
        dist.destroy_process_group()


def evaluate(spec, options):
    corpus = prepared_corpus(spec) or synthetic_corpus()
    _, heldout_data = split(corpus)
    model = TinyLM().to(options.device)
    init = spec.get("init_from")
    if init:
        saved, _ = load(init["uri"], ito.init_file(), spec)
        model.load_state_dict(saved["model"])
    else:
        ito.log("no checkpoint to evaluate: scoring the initial weights")
    asked = (spec.get("eval") or {}).get("metrics", [])
    missing = [m for m in asked if m not in ("heldout_loss", "accuracy")]
    if missing:
        ito.log("not computed by this trainer: " + ", ".join(missing))
    loss, accuracy = heldout(model, heldout_data, options.device)
    ito.metrics({"heldout_loss": loss, "accuracy": accuracy}, step=init["step"] if init else 0)


def main():
    parser = argparse.ArgumentParser(description="a small transformer LM trained with DDP through the Itô agent")
    parser.add_argument("--task", required=False)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--checkpoint-every-steps", type=int, default=0)
    parser.add_argument("--progress-every-steps", type=int, default=10)
    parser.add_argument("--progress-every-seconds", type=float, default=0.5)
    parser.add_argument("--step-delay-ms", type=int, default=0)
    options = parser.parse_args()
    if options.progress_every_steps < 1 or options.checkpoint_every_steps < 0 or options.step_delay_ms < 0 or options.progress_every_seconds < 0:
        parser.error("step counts and delays must not be negative")
    torch.set_num_threads(1)
    spec = ito.load_task()["spec"]
    if spec["kind"] == "eval":
        evaluate(spec, options)
    else:
        train(spec, options)
    return 0


if __name__ == "__main__":
    sys.exit(main())
