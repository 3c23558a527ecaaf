"""The peer of the captions row of `scripts/bench reading`: a recording to SubRip captions.

Loads faster-whisper (CTranslate2) from the same model folder the drive reads with, on every
core, decodes as drive-speech does (greedy, temperature 0 only, no conditioning on earlier text,
no VAD) and writes each segment as a cue.

usage: bench-captions.py MODEL_DIR IN.wav OUT.srt
"""

import os
import sys

from faster_whisper import WhisperModel


def clock(seconds):
    millis = round(seconds * 1000)
    return f"{millis // 3600000:02}:{millis // 60000 % 60:02}:{millis // 1000 % 60:02},{millis % 1000:03}"


def main():
    model_dir, recording, out = sys.argv[1:4]
    model = WhisperModel(model_dir, device="cpu", compute_type="float32", cpu_threads=os.cpu_count(), num_workers=1)
    segments, _info = model.transcribe(
        recording, beam_size=1, temperature=0.0, condition_on_previous_text=False, vad_filter=False
    )
    with open(out, "w", encoding="utf-8") as srt:
        for n, segment in enumerate(segments, 1):
            srt.write(f"{n}\n{clock(segment.start)} --> {clock(segment.end)}\n{segment.text.strip()}\n\n")


if __name__ == "__main__":
    main()
