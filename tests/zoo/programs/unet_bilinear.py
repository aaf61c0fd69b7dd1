"""unet.py's U-Net with bilinear upsampling (``nn.Upsample``) in place of ConvTranspose2d."""
from . import unet


def run(torch, device="cpu", steps=3):
    return unet.run(torch, device, steps, bilinear=True)
