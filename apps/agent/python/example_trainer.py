#!/usr/bin/env python3
"""An example trainer in pure Python that speaks the Itô trainer protocol through ito_trainer_protocol.

It fits a linear regression by minibatch SGD on a fixed synthetic data set (y = w.x + b + noise), so its loss
really falls; it writes a JSON checkpoint (weights, step, data position and the generator's state) at the task's
file:// checkpoint URI on the checkpoint interval and at the end, restores from resume_from exactly, starts from
init_from's weights, skips the batches of skip_steps, and evaluates held-out mean squared error. A real PyTorch
loop has the same shape: replace the model and keep the protocol calls.

    python3 example_trainer.py --task <file> [--checkpoint-every-steps N] [--progress-every-steps N] [--step-delay-ms N]
"""

import argparse
import json
import random
import sys
import time

import ito_trainer_protocol as ito

FORMAT = "ito.example-checkpoint/v1"
DIMENSIONS = 4
BATCH = 16
LEARNING_RATE = 0.02
NOISE = 0.5
_truth = random.Random("ito-example/truth")
TRUE_WEIGHTS = [_truth.gauss(0, 2) for _ in range(DIMENSIONS)]
TRUE_BIAS = _truth.gauss(0, 1)


def draw_batch(rng, size=BATCH):
    batch = []
    for _ in range(size):
        x = [rng.gauss(0, 1) for _ in range(DIMENSIONS)]
        y = sum(w * xi for w, xi in zip(TRUE_WEIGHTS, x)) + TRUE_BIAS + rng.gauss(0, NOISE)
        batch.append((x, y))
    return batch


def mse(weights, bias, batch):
    return sum((sum(w * xi for w, xi in zip(weights, x)) + bias - y) ** 2 for x, y in batch) / len(batch)


def sgd_step(weights, bias, batch):
    """One step on the batch; returns the batch's loss before the step and the new parameters."""
    loss = mse(weights, bias, batch)
    grad_w = [0.0] * DIMENSIONS
    grad_b = 0.0
    for x, y in batch:
        error = sum(w * xi for w, xi in zip(weights, x)) + bias - y
        for i in range(DIMENSIONS):
            grad_w[i] += 2 * error * x[i] / len(batch)
        grad_b += 2 * error / len(batch)
    return loss, [w - LEARNING_RATE * g for w, g in zip(weights, grad_w)], bias - LEARNING_RATE * grad_b


def encode_state(rng):
    version, internal, gauss_next = rng.getstate()
    return [version, list(internal), gauss_next]


def decode_state(state):
    version, internal, gauss_next = state
    return (version, tuple(internal), gauss_next)


def load_checkpoint(uri, spec, expect_step=None):
    return parse_checkpoint(ito.read_object(uri), spec, expect_step)


def parse_checkpoint(data, spec, expect_step=None):
    saved = ito.parse_json(data.decode("utf-8"))
    if not isinstance(saved, dict) or saved.get("format") != FORMAT or saved.get("run_id") != spec["run_id"]:
        raise ValueError("not an example-trainer checkpoint of this run")
    if expect_step is not None and (saved.get("stage") != spec["stage"] or saved.get("step") != expect_step):
        raise ValueError("resume_from names a checkpoint of another stage or step")
    return saved


def save_checkpoint(spec, state, final=False):
    """Rank 0 saves and reports for the job; the other ranks hold the same replicated weights."""
    if spec["rank"] != 0:
        return ito.clock()
    uri = ito.checkpoint_uri(spec, state["step"])
    record = {
        "format": FORMAT,
        "run_id": spec["run_id"],
        "stage": spec["stage"],
        "step": state["step"],
        "batch_index": state["batch_index"],
        "weights": state["weights"],
        "bias": state["bias"],
        "rng": encode_state(state["rng"]),
    }
    started = ito.clock()
    nbytes = ito.write_object(uri, (json.dumps(record) + "\n").encode("utf-8"))
    now = ito.clock()
    ito.checkpoint(step=state["step"], uri=uri, nbytes=nbytes, save_seconds=now - started, final=final, elapsed_s=now)
    return now


def initial_state(spec):
    resume, init = spec.get("resume_from"), spec.get("init_from")
    if resume:
        started = ito.clock()
        data = ito.read_object(resume["uri"])
        saved = parse_checkpoint(data, spec, expect_step=resume["step"])
        rng = random.Random()
        rng.setstate(decode_state(saved["rng"]))
        ito.restored(step=saved["step"], nbytes=len(data), restore_seconds=ito.clock() - started)
        ito.log("resumed at step %d" % saved["step"])
        return {"step": saved["step"], "batch_index": saved["batch_index"], "weights": saved["weights"], "bias": saved["bias"], "rng": rng}
    rng = random.Random("%s/%s/data" % (spec["run_id"], spec["stage"]))
    if init:
        saved = load_checkpoint(init["uri"], spec)
        ito.log("initialised from the checkpoint at step %d of the previous stage" % init["step"])
        return {"step": spec["start_step"], "batch_index": spec["start_step"], "weights": saved["weights"], "bias": saved["bias"], "rng": rng}
    return {"step": spec["start_step"], "batch_index": spec["start_step"], "weights": [0.0] * DIMENSIONS, "bias": 0.0, "rng": rng}


def evaluate(spec):
    init = spec.get("init_from")
    if init:
        saved = load_checkpoint(init["uri"], spec)
        weights, bias = saved["weights"], saved["bias"]
    else:
        ito.log("no checkpoint to evaluate: scoring the initial weights")
        weights, bias = [0.0] * DIMENSIONS, 0.0
    asked = (spec.get("eval") or {}).get("metrics", [])
    missing = [m for m in asked if m != "heldout_loss"]
    if missing:
        ito.log("not computed by this trainer: " + ", ".join(missing))
    ito.metrics({"heldout_loss": mse(weights, bias, draw_batch(random.Random("ito-example/held-out"), 1024))}, step=init["step"] if init else 0)


def train(spec, options):
    state = initial_state(spec)
    interval = spec["checkpoint"]["interval_minutes"] * 60
    last_checkpoint = ito.clock()
    losses = []
    skip = spec.get("skip_steps")
    while state["step"] < spec["total_steps"]:
        if options.step_delay_ms:
            time.sleep(options.step_delay_ms / 1000)
        if ito.stop_requested():
            if ito.checkpoint_on_stop():
                save_checkpoint(spec, state, final=True)
            ito.log("stopped at step %d" % state["step"])
            return
        if skip and skip["from"] <= state["batch_index"] < skip["to"]:
            first = state["batch_index"]
            while state["batch_index"] < skip["to"]:
                draw_batch(state["rng"])
                state["batch_index"] += 1
            ito.log("skipped data batches %d to %d" % (first, skip["to"] - 1))
        loss, state["weights"], state["bias"] = sgd_step(state["weights"], state["bias"], draw_batch(state["rng"]))
        state["batch_index"] += 1
        state["step"] += 1
        losses.append(loss)
        if state["step"] % options.progress_every_steps == 0 or state["step"] == spec["total_steps"]:
            ito.progress(step=state["step"], tokens=state["step"] * spec["step_tokens"], loss=sum(losses) / len(losses), elapsed_s=ito.clock())
            losses = []
        every = options.checkpoint_every_steps
        due = (every and state["step"] % every == 0) or ito.clock() - last_checkpoint >= interval
        if due and state["step"] < spec["total_steps"]:
            last_checkpoint = save_checkpoint(spec, state)
    if state["step"] != (spec.get("resume_from") or {}).get("step"):
        save_checkpoint(spec, state)


def main():
    parser = argparse.ArgumentParser(description="example trainer for the Itô trainer protocol")
    parser.add_argument("--task", required=False)
    parser.add_argument("--checkpoint-every-steps", type=int, default=0)
    parser.add_argument("--progress-every-steps", type=int, default=10)
    parser.add_argument("--step-delay-ms", type=int, default=0)
    options = parser.parse_args()
    if options.progress_every_steps < 1 or options.checkpoint_every_steps < 0 or options.step_delay_ms < 0:
        parser.error("step counts and delays must not be negative")
    spec = ito.load_task()["spec"]
    if spec["kind"] == "eval":
        evaluate(spec)
    else:
        train(spec, options)
    return 0


if __name__ == "__main__":
    sys.exit(main())
