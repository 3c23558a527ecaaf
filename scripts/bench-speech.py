"""The peer side of `scripts/bench speech` and its table.

Runs faster-whisper (CTranslate2) on the same WAVs with the same model folder, one thread
(`SPEECH_THREADS`, as `scripts/bench` sets it, for more),
greedy decoding at temperature 0 only and no conditioning on earlier text (as drive-speech
decodes), then prints word error and real-time factor of both, side by side, as Markdown.

usage: bench-speech.py MODEL_DIR OURS.tsv CLIP.wav...   (each CLIP.wav has its text in CLIP.txt)
"""

import os
import re
import sys
import time
import wave

from faster_whisper import WhisperModel


def words(text):
    return [w for w in (re.sub(r"[^0-9a-z']", "", w.lower()) for w in text.split()) if w]


def wer(reference, hypothesis):
    r, h = words(reference), words(hypothesis)
    row = list(range(len(h) + 1))
    for i in range(1, len(r) + 1):
        prev, row[0] = row[0], i
        for j in range(1, len(h) + 1):
            here = row[j]
            row[j] = min(prev + (r[i - 1] != h[j - 1]), row[j] + 1, row[j - 1] + 1)
            prev = here
    return row[len(h)] / len(r)


def main():
    model_dir, ours_tsv, clips = sys.argv[1], sys.argv[2], sys.argv[3:]
    ours = {}
    for line in open(ours_tsv, encoding="utf-8"):
        file, audio, took, _rtf, text = line.rstrip("\n").split("\t")
        ours[file] = (float(audio), float(took), text)
    started = time.perf_counter()
    threads = int(os.environ.get("SPEECH_THREADS", "1"))
    model = WhisperModel(model_dir, device="cpu", compute_type="float32", cpu_threads=threads, num_workers=1)
    print(f"peer model loaded in {time.perf_counter() - started:.2f} s", file=sys.stderr)

    print("| clip | audio | faster-whisper (CTranslate2) | WER | RTF | drive-speech (candle) | WER | RTF | RTF ratio (ours / peer) |")
    print("|---|---|---|---|---|---|---|---|---|")
    total = {"audio": 0.0, "peer": 0.0, "ours": 0.0}
    for clip in clips:
        reference = open(clip[: -len(".wav")] + ".txt", encoding="utf-8").read()
        with wave.open(clip) as w:
            audio = w.getnframes() / w.getframerate()
        started = time.perf_counter()
        segments, _info = model.transcribe(
            clip, beam_size=1, temperature=0.0, condition_on_previous_text=False, vad_filter=False
        )
        peer_text = " ".join(s.text.strip() for s in segments)  # the generator decodes here
        peer_took = time.perf_counter() - started
        _audio, our_took, our_text = ours[clip]
        total["audio"] += audio
        total["peer"] += peer_took
        total["ours"] += our_took
        name = clip.rsplit("/", 1)[-1]
        print(
            f"| {name} | {audio:.1f} s | {peer_took:.2f} s | {wer(reference, peer_text):.3f} | {peer_took / audio:.3f} "
            f"| {our_took:.2f} s | {wer(reference, our_text):.3f} | {our_took / audio:.3f} | {our_took / peer_took:.2f} |"
        )
        print(f"  peer: {peer_text}\n  ours: {our_text}", file=sys.stderr)
    print(
        f"| all | {total['audio']:.1f} s | {total['peer']:.2f} s | | {total['peer'] / total['audio']:.3f} "
        f"| {total['ours']:.2f} s | | {total['ours'] / total['audio']:.3f} | {total['ours'] / total['peer']:.2f} |"
    )


main()
