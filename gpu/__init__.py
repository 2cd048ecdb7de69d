"""GPU domain: the GPU catalog, the VRAM fit engine and the quote engine. Never imports aiogram."""
