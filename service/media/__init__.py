"""Rich media on documents: perceptual hashes of images (:mod:`neardup.media.images`) and the text of
SRT and WebVTT subtitles (:mod:`neardup.media.subtitles`)."""
