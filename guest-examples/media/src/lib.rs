//! `media`: one result with every kind of content part: an image, a sound, a
//! resource link and two embedded resources (text and binary).

use toolhost_guest::{CallContext, Part, Plugin, ToolDescriptor, ToolResult, json};

/// A 1x1 RGBA PNG (one half-transparent orange pixel): signature, IHDR,
/// IDAT (zlib), IEND, each chunk with its CRC.
const PNG: [u8; 70] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, // signature
    0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, // IHDR, 13 bytes
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, // width 1, height 1
    0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, // 8-bit RGBA, CRC
    0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, // IDAT, 13 bytes
    0x78, 0x9c, 0x63, 0x60, 0x68, 0xf8, 0xff, 0x1f, 0x00, 0x04, 0x82, 0x02, 0x7f, // zlib
    0xe7, 0xd8, 0x5a, 0x6c, // CRC
    0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82, // IEND
];

/// A 48-byte WAV file: PCM, mono, 8 kHz, 8-bit, four samples.
fn wav() -> Vec<u8> {
    let samples = [128u8, 160, 128, 96];
    let sample_rate: u32 = 8000;
    let mut wav = Vec::with_capacity(44 + samples.len());
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + samples.len() as u32).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes()); // size of the fmt chunk
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // channels
    wav.extend_from_slice(&sample_rate.to_le_bytes());
    wav.extend_from_slice(&sample_rate.to_le_bytes()); // bytes per second
    wav.extend_from_slice(&1u16.to_le_bytes()); // bytes per frame
    wav.extend_from_slice(&8u16.to_le_bytes()); // bits per sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&(samples.len() as u32).to_le_bytes());
    wav.extend_from_slice(&samples);
    wav
}

struct Media;

impl Plugin for Media {
    fn describe() -> Vec<ToolDescriptor> {
        vec![
            ToolDescriptor::new(
                "media",
                "Returns an image, a sound, a link and two embedded resources.",
            )
            .input_schema(json!({"type": "object", "properties": {}}))
            .read_only(true)
            .build(),
        ]
    }

    fn call(name: String, _arguments: String, _context: CallContext) -> ToolResult {
        if name != "media" {
            return ToolResult::unknown_tool(&name).build();
        }
        ToolResult::empty()
            .summary("An image, a sound, a link and two embedded resources")
            .part(Part::image(PNG, "image/png"))
            .part(Part::audio(wav(), "audio/wav"))
            .part(
                Part::resource_link("file:///reports/2027-02.csv", "2027-02.csv")
                    .title("February sales")
                    .description("Every order of February as CSV.")
                    .mime("text/csv")
                    .size(18234),
            )
            .part(Part::embedded_text(
                "file:///notes.txt",
                "text/plain",
                "Remember the milk",
            ))
            .part(Part::embedded_bytes("file:///logo.png", "image/png", PNG))
            .build()
    }
}

toolhost_guest::export_plugin!(Media);
