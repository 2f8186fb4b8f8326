"""A flat-layout package, installed in development mode (a .pth names /testbed)."""
