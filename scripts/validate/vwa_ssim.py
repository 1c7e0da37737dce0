"""Compares webfreeze's SSIM (eval_fuzzy_image_match) with VisualWebArena's get_image_ssim (Pillow +
scikit-image) on scikit-image's sample photos, their JPEG, noisy and resized variants, every pair.
Usage: vwa_ssim.py SITE_PACKAGES SSIM_BIN WORK_DIR"""
import sys, subprocess, glob, os
sys.path.insert(0, sys.argv[1])
from PIL import Image
import numpy as np
from skimage.metrics import structural_similarity as ssim
def vwa(a, b):
    A, B = Image.open(a), Image.open(b)
    size = max(A.size[0], B.size[0]), max(A.size[1], B.size[1])
    A = A.resize(size, Image.LANCZOS); B = B.resize(size, Image.LANCZOS)
    ga, gb = np.array(A.convert('L')), np.array(B.convert('L'))
    return ssim(ga, gb, full=True)[0]
from skimage import data
work = sys.argv[3]
d = os.path.join(work, 'img'); os.makedirs(d, exist_ok=True)
photos = os.path.join(work, 'photos'); os.makedirs(photos, exist_ok=True)
for name in ['astronaut', 'camera', 'coffee', 'chelsea', 'rocket', 'coins', 'immunohistochemistry', 'hubble_deep_field']:
    Image.fromarray(getattr(data, name)()).resize((160, 120), Image.LANCZOS).save(f'{photos}/{name}.png')
files = []
# demo photos (written by the caller) + variants
for p in sorted(glob.glob(f'{photos}/*.png')):
    files.append(p)
    im = Image.open(p).convert('RGB')
    n = os.path.basename(p)[:-4]
    q = f'{d}/{n}-q60.jpg'; im.save(q, quality=60); files.append(q)
    arr = np.array(im).astype(int); arr = np.clip(arr + np.random.RandomState(2).randint(-20, 21, arr.shape), 0, 255).astype('uint8')
    z = f'{d}/{n}-noise.png'; Image.fromarray(arr).save(z); files.append(z)
    s = f'{d}/{n}-small.png'; im.resize((61, 47), Image.BILINEAR).save(s); files.append(s)
pairs = [(a, b) for i, a in enumerate(files) for b in files[i:]]
ours = subprocess.run([sys.argv[2]], input='\n'.join(f'{a} {b}' for a, b in pairs) + '\n', capture_output=True, text=True).stdout.splitlines()
same, resized = [], []
agree08 = 0
for (a, b), o in zip(pairs, ours):
    t = vwa(a, b); o = float(o)
    sa, sb = Image.open(a).size, Image.open(b).size
    (same if sa == sb else resized).append(abs(t - o))
    agree08 += (t > 0.8) == (o > 0.8)
print(f"pairs {len(pairs)}: same size {len(same)} max |diff| {max(same):.2e}; resized {len(resized)} max |diff| {max(resized):.3f} mean {sum(resized)/len(resized):.3f}; same verdict at 0.8: {agree08}/{len(pairs)}")
