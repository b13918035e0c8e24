#!/usr/bin/env python3
"""ssim.py - mean SSIM of thumbnails against reference images of the same pixel size.

    ssim.py LABEL THUMB REF [THUMB REF ...]

Each THUMB (JPEG or PNG) is compared with its REF (lossless PNG made by ImageMagick at
exactly the thumbnail's size). SSIM is scikit-image's structural_similarity on 8-bit
RGB (alpha dropped), 7x7 window, data_range 255, averaged over the three channels.
Prints one line per pair and a final "LABEL mean SSIM <value> over N" line.
"""
import sys

import numpy as np
from PIL import Image
from skimage.metrics import structural_similarity


def load(path):
    return np.asarray(Image.open(path).convert("RGB"), dtype=np.uint8)


def main(argv):
    if len(argv) < 4 or len(argv) % 2:
        sys.exit(__doc__)
    label, pairs = argv[1], argv[2:]
    scores = []
    for thumb, ref in zip(pairs[::2], pairs[1::2]):
        a, b = load(thumb), load(ref)
        if a.shape != b.shape:
            sys.exit(f"ssim.py: {thumb} is {a.shape}, reference {ref} is {b.shape}")
        s = structural_similarity(a, b, channel_axis=2, data_range=255)
        scores.append(s)
        print(f"  {label:10s} {thumb.rsplit('/', 1)[-1]:24s} {a.shape[1]}x{a.shape[0]}  SSIM {s:.4f}")
    print(f"{label} mean SSIM {np.mean(scores):.4f} over {len(scores)}")


if __name__ == "__main__":
    main(sys.argv)
