"""``minitorch.vision``: what PyTorch programs take from torchvision, under the same names.

    from minitorch.vision import datasets, transforms
    transform = transforms.Compose([transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip(),
                                    transforms.ToTensor(), transforms.Normalize(mean, std)])
    trainset = datasets.CIFAR10(root="./data", train=True, download=True, transform=transform)

``import minitorch.vision as torchvision`` lets torchvision-style code run unchanged.
(``minitorch.vision`` is imported on first use: ``import minitorch`` does not load it.)
"""
from . import datasets, transforms

__all__ = ["datasets", "transforms"]
