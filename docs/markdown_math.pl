#!/usr/bin/perl
# Doxygen input filter for the chapters: turns the math of GitHub-style Markdown into Doxygen's
# formula commands, so one source renders as math in both places.
#
#   $...$            inline math   ->  \f$...\f$
#   ```math ... ```  display math  ->  \f[ ... \f]
#
# Fenced code blocks and `code spans` are copied unchanged (a shell prompt "$ cmd" stays text),
# and so is "\$", an escaped dollar. An inline formula must open with a non-space and close
# after one, as on GitHub. Every input line gives exactly one output line, so Doxygen's warnings
# keep the chapter's line numbers. Usage (Doxygen's FILTER_PATTERNS): perl markdown_math.pl FILE
use strict;
use warnings;

my $fence = '';      # the fence that opened the current code block ('' outside one)
my $in_math = 0;     # inside a ```math block

while (my $line = <>) {
    if ($fence eq '') {
        if ($line =~ /^(\s*)(```+|~~~+)\s*math\s*$/) {
            ($fence, $in_math) = ($2, 1);
            print "$1\\f[\n";
        } elsif ($line =~ /^\s*(```+|~~~+)/) {
            ($fence, $in_math) = ($1, 0);
            print $line;
        } else {
            print inline_math($line);
        }
    } elsif ($line =~ /^(\s*)\Q$fence\E\s*$/) {
        print $in_math ? "$1\\f]\n" : $line;
        ($fence, $in_math) = ('', 0);
    } else {
        print $line;
    }
}

# Replaces $...$ outside code spans; a code span is a run of backticks up to the same run.
sub inline_math {
    my ($text) = @_;
    my $out = '';
    while ($text =~ /\G(.*?)(`+)(.*?)\2/gcs) {
        $out .= dollars($1) . $2 . $3 . $2;
    }
    my $rest = substr($text, pos($text) // 0);
    return $out . dollars($rest);
}

sub dollars {
    my ($text) = @_;
    $text =~ s/(?<![\\\$])\$(?=[^\s\$])(.+?)(?<=[^\s\\])\$(?![\$\d])/\\f\$$1\\f\$/g;
    return $text;
}
