// Package fmp4 writes fragmented MP4 (ISO BMFF) files of one video track,
// H.264 or H.265, from the phones' video packets. It remuxes only: the
// encoded pictures are stored as they come, never decoded or re-encoded.
//
// # Format
//
// A file is an init segment (ftyp, then moov with empty sample tables and
// mvex/trex) followed by fragments (moof with mfhd, and traf with tfhd,
// tfdt and trun, then the mdat with the samples). trun carries each
// sample's duration, size and flags (sync or not); tfdt carries the first
// sample's decode time as a 64-bit value, so decode times are absolute in
// every fragment. The track's clock is 90 kHz (DefaultTimescale).
//
// Samples are the packets' access units with each Annex B start code
// replaced by a 4-byte big-endian length. The sample entry is avc3 (H.264)
// or hev1 (H.265): its avcC or hvcC is built from the first config packet,
// and the format lets parameter sets also come in band. That is how a size
// change (the phone rotated, a new config packet with other parameter
// sets) is carried in the same track: from the change on, every key frame
// starts with the new parameter sets, so a decoder that starts or seeks to
// any key frame after the change decodes at the new size. The codec cannot
// change within a file (ErrCodecChange).
//
// There are no composition offsets: the phones' encoders send no B frames,
// so decode order is presentation order.
//
// # Pieces
//
// ParseConfig, InitSegment, AppendSample and Fragment are the low-level
// pieces: a Media Source in a browser can be fed an init segment and then
// fragments built with them. Writer puts them together over an io.Writer
// with a fragment policy: a fragment is cut when a key frame comes (so
// fragments start at key frames where the stream allows), when it holds
// about Options.FragmentDuration (1 s) of media, or by a timer that long
// after its first sample when no packet comes.
//
// # Timeline
//
// A packet's PTS is its media time; each sample lasts until the next
// one's, so a gap in the packets (packets dropped upstream) makes the frame
// before it last longer, and the media time of every sample stays its PTS.
// Only a fragment cut by the timer cannot know the next PTS: its last
// sample lasts until Options.Horizon, and the next fragment's tfdt says
// when the next sample really starts (players such as ffmpeg hold the last
// frame across that gap).
//
// # Crashes
//
// Every fragment is written with one Write call, whole. A crash loses at
// most the fragment being built; the file then ends after a whole fragment
// and stays playable, or, when the crash came in the middle of a write,
// Repair cuts the partial fragment off. The moov says nothing of the
// duration, so nothing has to be rewritten at the end.
package fmp4
