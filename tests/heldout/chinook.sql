-- Chinook (a digital music store), as published by Luis Rocha
-- (github.com/lerocha/chinook-database, ChinookDatabase/DataSources/
-- Chinook_Sqlite.sql): the eleven tables with their published names, keys and
-- foreign keys (PascalCase, `Id` suffixes), typed for DuckDB (NVARCHAR as
-- VARCHAR, DATETIME as TIMESTAMP). The rows are a handful written for this
-- test in the published shape, not the published data.
-- Written for the held-out search set (issue 38, item 5) without reading the
-- search code or its synonym table.

CREATE TABLE Artist (
    ArtistId INTEGER NOT NULL,
    Name VARCHAR(120),
    CONSTRAINT PK_Artist PRIMARY KEY (ArtistId)
);

CREATE TABLE Album (
    AlbumId INTEGER NOT NULL,
    Title VARCHAR(160) NOT NULL,
    ArtistId INTEGER NOT NULL,
    CONSTRAINT PK_Album PRIMARY KEY (AlbumId),
    FOREIGN KEY (ArtistId) REFERENCES Artist (ArtistId)
);

CREATE TABLE Employee (
    EmployeeId INTEGER NOT NULL,
    LastName VARCHAR(20) NOT NULL,
    FirstName VARCHAR(20) NOT NULL,
    Title VARCHAR(30),
    ReportsTo INTEGER,
    BirthDate TIMESTAMP,
    HireDate TIMESTAMP,
    Address VARCHAR(70),
    City VARCHAR(40),
    State VARCHAR(40),
    Country VARCHAR(40),
    PostalCode VARCHAR(10),
    Phone VARCHAR(24),
    Fax VARCHAR(24),
    Email VARCHAR(60),
    CONSTRAINT PK_Employee PRIMARY KEY (EmployeeId),
    FOREIGN KEY (ReportsTo) REFERENCES Employee (EmployeeId)
);

CREATE TABLE Customer (
    CustomerId INTEGER NOT NULL,
    FirstName VARCHAR(40) NOT NULL,
    LastName VARCHAR(20) NOT NULL,
    Company VARCHAR(80),
    Address VARCHAR(70),
    City VARCHAR(40),
    State VARCHAR(40),
    Country VARCHAR(40),
    PostalCode VARCHAR(10),
    Phone VARCHAR(24),
    Fax VARCHAR(24),
    Email VARCHAR(60) NOT NULL,
    SupportRepId INTEGER,
    CONSTRAINT PK_Customer PRIMARY KEY (CustomerId),
    FOREIGN KEY (SupportRepId) REFERENCES Employee (EmployeeId)
);

CREATE TABLE Genre (
    GenreId INTEGER NOT NULL,
    Name VARCHAR(120),
    CONSTRAINT PK_Genre PRIMARY KEY (GenreId)
);

CREATE TABLE MediaType (
    MediaTypeId INTEGER NOT NULL,
    Name VARCHAR(120),
    CONSTRAINT PK_MediaType PRIMARY KEY (MediaTypeId)
);

CREATE TABLE Track (
    TrackId INTEGER NOT NULL,
    Name VARCHAR(200) NOT NULL,
    AlbumId INTEGER,
    MediaTypeId INTEGER NOT NULL,
    GenreId INTEGER,
    Composer VARCHAR(220),
    Milliseconds INTEGER NOT NULL,
    Bytes INTEGER,
    UnitPrice NUMERIC(10, 2) NOT NULL,
    CONSTRAINT PK_Track PRIMARY KEY (TrackId),
    FOREIGN KEY (AlbumId) REFERENCES Album (AlbumId),
    FOREIGN KEY (GenreId) REFERENCES Genre (GenreId),
    FOREIGN KEY (MediaTypeId) REFERENCES MediaType (MediaTypeId)
);

CREATE TABLE Invoice (
    InvoiceId INTEGER NOT NULL,
    CustomerId INTEGER NOT NULL,
    InvoiceDate TIMESTAMP NOT NULL,
    BillingAddress VARCHAR(70),
    BillingCity VARCHAR(40),
    BillingState VARCHAR(40),
    BillingCountry VARCHAR(40),
    BillingPostalCode VARCHAR(10),
    Total NUMERIC(10, 2) NOT NULL,
    CONSTRAINT PK_Invoice PRIMARY KEY (InvoiceId),
    FOREIGN KEY (CustomerId) REFERENCES Customer (CustomerId)
);

CREATE TABLE InvoiceLine (
    InvoiceLineId INTEGER NOT NULL,
    InvoiceId INTEGER NOT NULL,
    TrackId INTEGER NOT NULL,
    UnitPrice NUMERIC(10, 2) NOT NULL,
    Quantity INTEGER NOT NULL,
    CONSTRAINT PK_InvoiceLine PRIMARY KEY (InvoiceLineId),
    FOREIGN KEY (InvoiceId) REFERENCES Invoice (InvoiceId),
    FOREIGN KEY (TrackId) REFERENCES Track (TrackId)
);

CREATE TABLE Playlist (
    PlaylistId INTEGER NOT NULL,
    Name VARCHAR(120),
    CONSTRAINT PK_Playlist PRIMARY KEY (PlaylistId)
);

CREATE TABLE PlaylistTrack (
    PlaylistId INTEGER NOT NULL,
    TrackId INTEGER NOT NULL,
    CONSTRAINT PK_PlaylistTrack PRIMARY KEY (PlaylistId, TrackId),
    FOREIGN KEY (PlaylistId) REFERENCES Playlist (PlaylistId),
    FOREIGN KEY (TrackId) REFERENCES Track (TrackId)
);

INSERT INTO Artist VALUES
    (1, 'Quiet Harbour'),
    (2, 'The Long Evenings'),
    (3, 'Marta Oyelaran Trio');

INSERT INTO Album VALUES
    (1, 'Salt and Lanterns', 1),
    (2, 'Night Ferry', 1),
    (3, 'Kitchen Radio', 2),
    (4, 'Standards, Mostly', 3);

-- One row per statement: DuckDB checks the self-reference (ReportsTo)
-- against the rows already in the table.
INSERT INTO Employee VALUES
    (1, 'Okafor', 'Grace', 'General Manager', NULL, TIMESTAMP '1968-02-11 00:00:00', TIMESTAMP '2019-08-14 00:00:00', '11 Birch Road', 'Edmonton', 'AB', 'Canada', 'T5K 2N1', '+1 (780) 555-0101', '+1 (780) 555-0102', 'grace@chinookcorp.example');
INSERT INTO Employee VALUES
    (2, 'Lindqvist', 'Paul', 'Sales Manager', 1, TIMESTAMP '1975-09-30 00:00:00', TIMESTAMP '2019-10-01 00:00:00', '7 Ash Lane', 'Calgary', 'AB', 'Canada', 'T2P 5M5', '+1 (403) 555-0123', '+1 (403) 555-0124', 'paul@chinookcorp.example');
INSERT INTO Employee VALUES
    (3, 'Moreau', 'Jane', 'Sales Support Agent', 2, TIMESTAMP '1981-04-17 00:00:00', TIMESTAMP '2020-03-02 00:00:00', '402 Elm Street', 'Calgary', 'AB', 'Canada', 'T2P 2T3', '+1 (403) 555-0188', '+1 (403) 555-0189', 'jane@chinookcorp.example');

INSERT INTO Customer VALUES
    (1, 'Luiz', 'Barros', 'Estúdio Norte', 'Rua das Flores 120', 'Recife', 'PE', 'Brazil', '50010-000', '+55 (81) 5555-0100', NULL, 'luiz.barros@example.com', 3),
    (2, 'Hanna', 'Vogel', NULL, 'Lindenweg 4', 'Leipzig', NULL, 'Germany', '04109', '+49 341 555010', NULL, 'hanna.vogel@example.de', 3),
    (3, 'Aiden', 'Walsh', 'Walsh Audio', '88 Quay Street', 'Dublin', 'Dublin', 'Ireland', NULL, '+353 1 555 0190', '+353 1 555 0191', 'aiden@walshaudio.example', 3);

INSERT INTO Genre VALUES (1, 'Rock'), (2, 'Jazz'), (3, 'Ambient');

INSERT INTO MediaType VALUES (1, 'MPEG audio file'), (2, 'AAC audio file'), (3, 'Protected MPEG-4 video file');

INSERT INTO Track VALUES
    (1, 'Lantern Song', 1, 1, 1, 'A. Brennan', 243000, 7950000, 0.99),
    (2, 'Low Tide', 1, 1, 3, 'A. Brennan', 301500, 9822000, 0.99),
    (3, 'Ferry Lights', 2, 2, 1, NULL, 198200, 6410000, 0.99),
    (4, 'Toast at Seven', 3, 1, 1, 'K. Ames, R. Ames', 221900, 7200000, 0.99),
    (5, 'Autumn Changes', 4, 2, 2, 'M. Oyelaran', 412000, 13400000, 1.99);

INSERT INTO Invoice VALUES
    (1, 1, TIMESTAMP '2025-01-03 00:00:00', 'Rua das Flores 120', 'Recife', 'PE', 'Brazil', '50010-000', 1.98),
    (2, 2, TIMESTAMP '2025-01-11 00:00:00', 'Lindenweg 4', 'Leipzig', NULL, 'Germany', '04109', 2.98),
    (3, 3, TIMESTAMP '2025-02-06 00:00:00', '88 Quay Street', 'Dublin', 'Dublin', 'Ireland', NULL, 0.99),
    (4, 1, TIMESTAMP '2025-02-20 00:00:00', 'Rua das Flores 120', 'Recife', 'PE', 'Brazil', '50010-000', 1.99);

INSERT INTO InvoiceLine VALUES
    (1, 1, 1, 0.99, 1),
    (2, 1, 2, 0.99, 1),
    (3, 2, 3, 0.99, 1),
    (4, 2, 5, 1.99, 1),
    (5, 3, 4, 0.99, 1),
    (6, 4, 5, 1.99, 1);

INSERT INTO Playlist VALUES (1, 'Music'), (2, 'Late Night'), (3, 'Jazz Classics');

INSERT INTO PlaylistTrack VALUES (1, 1), (1, 2), (1, 3), (1, 4), (1, 5), (2, 2), (2, 3), (3, 5);
